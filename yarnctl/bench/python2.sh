#!/bin/sh
# python2.sh DEST: a Python 2.7 interpreter in DEST/bin/python2, for HiBench's scripts (its
# bin/functions/*.py are Python 2 only, and Debian 12 has no python2). It unpacks Debian 11's
# python2.7 packages into DEST (no system change, no root): the archive's InRelease is checked with
# the Debian archive keyring, the package index against InRelease, each .deb against the index.
set -eu

[ $# -eq 1 ] || { echo "usage: python2.sh DEST" >&2; exit 2; }
mkdir -p "$1"
dest=$(cd "$1" && pwd)
mirror=${DEBIAN_MIRROR:-https://deb.debian.org/debian}  # archive.debian.org/debian once bullseye moves there
suite=bullseye
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
packages="python2.7-minimal libpython2.7-minimal libpython2.7-stdlib"

if [ -x "$dest/bin/python2" ] && "$dest/bin/python2" -c 'import urllib, socket, subprocess' 2>/dev/null; then
    exit 0
fi
for tool in curl gpgv dpkg dpkg-deb sha256sum; do
    command -v "$tool" >/dev/null || { echo "python2.sh: $tool is needed" >&2; exit 2; }
done
[ -r "$keyring" ] || { echo "python2.sh: $keyring missing (apt-get install debian-archive-keyring)" >&2; exit 2; }

arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
curl -fsS -o "$work/InRelease" "$mirror/dists/$suite/InRelease"
gpgv --quiet --keyring "$keyring" --output "$work/Release" "$work/InRelease" 2>/dev/null \
    || { echo "python2.sh: $mirror/dists/$suite/InRelease: bad signature" >&2; exit 1; }
# an older, genuinely signed Release of another suite must not pass for this one
grep -qx "Codename: $suite" "$work/Release" \
    || { echo "python2.sh: $mirror/dists/$suite/InRelease is not $suite's" >&2; exit 1; }
index=main/binary-$arch/Packages.gz
want=$(awk -v f="$index" '/^SHA256:/{s=1; next} /^[A-Za-z]/{s=0} s && $3==f {print $1}' "$work/Release")
curl -fsS -o "$work/Packages.gz" "$mirror/dists/$suite/$index"
echo "$want  $work/Packages.gz" | sha256sum --quiet -c - \
    || { echo "python2.sh: $index does not match InRelease" >&2; exit 1; }
gzip -dc "$work/Packages.gz" > "$work/Packages"

mkdir -p "$dest/root" "$dest/bin"
for p in $packages; do
    file=$(awk -v p="$p" '$1=="Package:"{cur=$2} cur==p && $1=="Filename:"{print $2; exit}' "$work/Packages")
    sum=$(awk -v p="$p" '$1=="Package:"{cur=$2} cur==p && $1=="SHA256:"{print $2; exit}' "$work/Packages")
    [ -n "$file" ] || { echo "python2.sh: $p is not in $suite" >&2; exit 1; }
    curl -fsS -o "$work/$p.deb" "$mirror/$file"
    echo "$sum  $work/$p.deb" | sha256sum --quiet -c - || { echo "python2.sh: $p.deb does not match the index" >&2; exit 1; }
    dpkg-deb -x "$work/$p.deb" "$dest/root"
done

# a link, not a wrapper: Python finds its library (lib/python2.7/os.py) from the interpreter's real
# path, so no PYTHONHOME leaks into what it runs
ln -sf ../root/usr/bin/python2.7 "$dest/bin/python2"
"$dest/bin/python2" -c 'import urllib, socket, subprocess; import sys; print("python2.sh: %s in %s" % (sys.version.split()[0], sys.argv[1]))' "$dest"
