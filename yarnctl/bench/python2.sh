#!/bin/sh
# python2.sh DEST: a Python 2.7 interpreter in DEST/bin/python2, for HiBench's scripts (its
# bin/functions/*.py are Python 2 only, and Debian 12 has no python2). It unpacks Debian 11's
# python2.7 packages into DEST (no system change, no root): the archive's InRelease is checked with
# the Debian archive keyring, the package index against InRelease, each .deb against the index.
set -eu

[ $# -eq 1 ] || { echo "usage: python2.sh DEST" >&2; exit 2; }
mkdir -p "$1"
dest=$(cd "$1" && pwd)  # PYTHONHOME must be absolute
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bullseye
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
packages="python2.7-minimal libpython2.7-minimal libpython2.7-stdlib"

if [ -x "$dest/bin/python2" ] && "$dest/bin/python2" -c 'import urllib, socket, subprocess' 2>/dev/null; then
    exit 0
fi
for tool in curl gpgv dpkg-deb sha256sum; do
    command -v "$tool" >/dev/null || { echo "python2.sh: $tool is needed" >&2; exit 2; }
done
[ -r "$keyring" ] || { echo "python2.sh: $keyring missing (apt-get install debian-archive-keyring)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -fsS -o "$work/InRelease" "$mirror/dists/$suite/InRelease"
gpgv --quiet --keyring "$keyring" --output "$work/Release" "$work/InRelease" 2>/dev/null \
    || { echo "python2.sh: $mirror/dists/$suite/InRelease: bad signature" >&2; exit 1; }
index=main/binary-amd64/Packages.gz
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

# the interpreter finds its library through PYTHONHOME, as it is not installed under /usr
cat > "$dest/bin/python2" <<SCRIPT
#!/bin/sh
PYTHONHOME='$dest/root/usr' exec '$dest/root/usr/bin/python2.7' "\$@"
SCRIPT
chmod +x "$dest/bin/python2"
"$dest/bin/python2" -c 'import urllib, socket, subprocess; import sys; print("python2.sh: %s in %s" % (sys.version.split()[0], sys.argv[1]))' "$dest"
