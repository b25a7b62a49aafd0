#!/usr/bin/env bash
# make docker-test: build docker/Dockerfile, start docker/compose.yaml and run its documented journey
# (docker/README.md, README.md, docs/deploy.md) for real, then tear everything down.
#
# Runs as root on a fresh Debian bookworm machine with no image registry in reach. It installs podman and
# podman-compose (Debian, PyPI), bootstraps a Debian base image with mmdebstrap from the machine's own
# mirror, builds stand-ins for the images docker/Dockerfile and compose.yaml name (MAVEN_IMAGE,
# JAVA_IMAGE, PYTHON_IMAGE, prometheus, grafana), then runs every documented `docker ...` command
# through the `docker` function below, which hands it to podman / podman-compose. The documented
# commands appear in this file verbatim: tests/deploy/test_docker_docs.py checks that they do.
#
# For each scheduler (the shim with a paper policy, then the stock CapacityScheduler) it brings the
# cluster up, waits for every health check, generates text into HDFS, runs a wordcount on it and checks
# both jobs SUCCEEDED, Prometheus's target is up and (shim) the policy placed containers; then `down -v`.
# Afterwards no container, volume or pod of the project is left. Images stay (cached for the next run).
#
#   docker/test.sh             everything (what `make docker-test` runs)
#   docker/test.sh setup       only the machine set-up and the images
# Work dir (base image tarball, stand-in Containerfiles, the podman-compose venv): $YARNCTL_DOCKER_WORK,
# default /var/tmp/yarnctl-docker-test.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${YARNCTL_DOCKER_WORK:-/var/tmp/yarnctl-docker-test}
STANDIN=localhost/yarnctl-standin
PROJECT=yarnctl                      # compose.yaml's `name:`
T0=$(date +%s)
say() { printf '== [%4ds] %s\n' $(( $(date +%s) - T0 )) "$*"; }
die() { printf 'docker-test: FAILED: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (it installs packages and writes /etc/containers/containers.conf)"
mkdir -p "$W"

# ---- the machine: podman and friends from Debian, podman-compose from PyPI ---------------------------
setup_machine() {
    local need=()
    for c in podman runc netavark mmdebstrap fuse-overlayfs iptables curl jq; do
        command -v "$c" >/dev/null || [ -x "/usr/lib/podman/$c" ] || need+=("$c")
    done
    [ -x /usr/lib/podman/aardvark-dns ] || need+=(aardvark-dns)
    python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
    if [ ${#need[@]} -gt 0 ]; then
        say "installing ${need[*]} (apt)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends podman runc netavark aardvark-dns iptables fuse-overlayfs \
            mmdebstrap python3-venv ca-certificates curl jq >/dev/null
    fi
    # containers here may not raise nofile past 20000 (no CAP_SYS_RESOURCE) and conmon needs nproc;
    # Debian's crun 1.8 refuses hybrid cgroups, runc works; no systemd, so cgroupfs; netavark, not the CNI
    # config Debian's podman package leaves without its plugins
    mkdir -p /etc/containers
    cat >/etc/containers/containers.conf <<'EOF'
# written by yarnctl docker/test.sh (make docker-test)
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
[network]
network_backend = "netavark"
EOF
    if [ ! -x "$W/venv/bin/podman-compose" ]; then
        say "installing podman-compose (PyPI) into $W/venv"
        python3 -m venv "$W/venv"
        "$W/venv/bin/pip" install -q 'podman-compose>=1.1,<2'
    fi
}

# ---- images: a Debian base by mmdebstrap, stand-ins for the registry images ---------------------------
debian_mirror() {  # the mirror this machine's apt uses (deb822 sources, else sources.list)
    local m
    m=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1 || true)
    [ -n "$m" ] || m=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    echo "${m:-http://deb.debian.org/debian}"
}

base_image() {
    podman image exists localhost/debian:bookworm && return
    local m
    m=$(debian_mirror)
    say "bootstrapping localhost/debian:bookworm from $m (mmdebstrap)"
    # the machine's CA certificates go in too: HTTPS here may pass through a proxy with its own CA.
    # The hooks are run by mmdebstrap, with $1 the new root:
    # shellcheck disable=SC2016
    mmdebstrap --quiet --variant=minbase --include=ca-certificates \
        --customize-hook='mkdir -p "$1/usr/local/share/ca-certificates"; cp /usr/local/share/ca-certificates/*.crt "$1/usr/local/share/ca-certificates/" 2>/dev/null || true' \
        --customize-hook='chroot "$1" update-ca-certificates >/dev/null 2>&1' \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/*' \
        bookworm "$W/base.tar" "deb $m bookworm main" "deb $m bookworm-updates main" \
        "deb ${m%/debian}/debian-security bookworm-security main"
    podman import --quiet --change 'CMD ["bash"]' "$W/base.tar" localhost/debian:bookworm >/dev/null
    rm -f "$W/base.tar"
}

standin() {  # NAME "DEBIAN PACKAGES" [EXTRA CONTAINERFILE LINES]; rebuilt when its recipe changes
    local cf=$W/standin/$1.containerfile sum
    printf 'FROM localhost/debian:bookworm\nRUN apt-get update && apt-get install -y --no-install-recommends %s && rm -rf /var/lib/apt/lists/*\n%b\n' \
        "$2" "${3:-}" >"$cf"
    sum=$(cat "$cf" "$W"/standin/*.py | sha256sum | cut -c1-16)
    [ "$(podman image inspect --format '{{index .Labels "yarnctl.recipe"}}' "$STANDIN/$1:bookworm" 2>/dev/null)" = "$sum" ] &&
        return
    say "building stand-in $STANDIN/$1:bookworm ($2)"
    podman build --label "yarnctl.recipe=$sum" -f "$cf" -t "$STANDIN/$1:bookworm" "$W/standin" >"$W/standin/$1.log" 2>&1 ||
        { tail -30 "$W/standin/$1.log"; die "building the stand-in for $1"; }
}

images() {
    base_image
    mkdir -p "$W/standin"
    # grafana/grafana: its health endpoint only (the dashboard needs the real image)
    cat >"$W/standin/grafana.py" <<'EOF'
import http.server as h, signal, sys
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # PID 1 has no default handler
class H(h.BaseHTTPRequestHandler):
    def do_GET(s): s.send_response(200); s.end_headers(); s.wfile.write(b'{"database":"ok"}')
h.ThreadingHTTPServer(("", 3000), H).serve_forever()
EOF
    # in parallel: mostly package downloads
    local pids=() pid
    standin maven "openjdk-17-jdk-headless maven" & pids+=($!)         # for maven:3.9-eclipse-temurin-17
    standin java openjdk-17-jre-headless \
        'RUN mkdir -p /opt/java && cp -rL /usr/lib/jvm/java-17-openjdk-amd64 /opt/java/openjdk' & pids+=($!)  # eclipse-temurin:8-jre
    standin python "python3 python3-venv python-is-python3" & pids+=($!)  # for python:3.11-slim-bookworm
    standin prometheus "prometheus wget" 'ENTRYPOINT ["/usr/bin/prometheus"]' & pids+=($!)   # prom/prometheus
    standin grafana "python3 wget" 'COPY grafana.py /grafana.py\nENTRYPOINT ["python3","/grafana.py"]' & pids+=($!)
    for pid in "${pids[@]}"; do wait "$pid" || die "a stand-in image did not build"; done
    printf 'services:\n  prometheus: {image: %s/prometheus:bookworm}\n  grafana: {image: %s/grafana:bookworm}\n' \
        "$STANDIN" "$STANDIN" >"$W/compose.local.yaml"
}

# the documented `docker ...` commands, on podman: the image build gets the stand-in base images, compose
# gets the stand-ins for prometheus and grafana (an override file)
docker() {
    case "$1 ${2:-} ${3:-}" in
        "build -f docker/Dockerfile")
            shift
            podman build --ignorefile docker/Dockerfile.dockerignore \
                --build-arg MAVEN_IMAGE=$STANDIN/maven:bookworm --build-arg JAVA_IMAGE=$STANDIN/java:bookworm \
                --build-arg PYTHON_IMAGE=$STANDIN/python:bookworm "$@" ;;
        "compose -f docker/compose.yaml")
            shift 3
            # like `docker compose exec`, no pseudo-terminal when stdin is none
            if [ "$1" = exec ] && [ ! -t 0 ]; then shift; set -- exec -T "$@"; fi
            # podman 4.3 refuses to start a container whose direct dependency is not running (e.g. restarting)
            # while that dependency's own are ("depends on container ... not found in input list",
            # podman-compose#921, fixed in podman 5.6 by podman#26193): it failed one CI run at grafana.
            # Without --requires links no container has a dependency with its own; podman-compose still starts
            # services in depends_on order, and podman 4.3 ignores its health conditions either way
            if [ "$1" = up ]; then shift; set -- up --no-deps "$@"; fi
            "$W/venv/bin/podman-compose" -f docker/compose.yaml -f "$W/compose.local.yaml" "$@" ;;
        *) die "not a documented command: docker $*" ;;
    esac
}

refusals() {  # connections serve refused for want of the token (a py4j login that failed), as it logged them
    podman logs "${PROJECT}_serve_1" 2>&1 | grep -cE 'refused a connection|Py4JAuthenticationError|Could not authenticate' || true
}
containers() { podman ps -a -q --filter "label=io.podman.compose.project=$PROJECT"; }
volumes() { podman volume ls -q --filter "label=io.podman.compose.project=$PROJECT"; }

# podman 4.3 without systemd runs no health checks by itself: run them until all pass; $1 timeout (s),
# $2 a service left out (one a bad-input case keeps down)
wait_healthy() {
    local deadline=$(( $(date +%s) + ${1:-300} )) c bad
    while :; do
        bad=
        for c in $(podman ps -a --format '{{.Names}}' --filter "label=io.podman.compose.project=$PROJECT"); do
            [ "$c" = "${PROJECT}_${2:-}_1" ] && continue
            podman healthcheck run "$c" >/dev/null 2>&1 || bad="$bad $c"
        done
        [ -z "$bad" ] && return 0
        if [ "$(date +%s)" -ge "$deadline" ]; then
            for c in $bad; do echo "--- $c (last log lines)"; podman logs --tail 15 "$c" 2>&1; done
            die "not healthy after ${1:-300} s:$bad"
        fi
        sleep 5
    done
}

teardown() {
    if [ -n "$(containers)$(volumes)" ]; then
        say "tearing down"
        docker compose -f docker/compose.yaml down -v >/dev/null 2>&1 || true
        containers | xargs -r podman rm -f >/dev/null 2>&1 || true
        volumes | xargs -r podman volume rm -f >/dev/null 2>&1 || true
    fi
}

# one scheduler's journey: the jobs on HDFS and the checks; $1 names it in the summary
journey() {
    local name=$1 out apps
    wait_healthy 360
    say "$name: every service healthy"
    docker compose -f docker/compose.yaml ps
    say "$name: randomtextwriter (3 maps, 30 MB into HDFS /input)"
    docker compose -f docker/compose.yaml exec resourcemanager yarnctl-daemon client \
        org.apache.hadoop.util.RunJar /opt/hadoop/lib/hadoop-mapreduce-examples-2.7.7.jar randomtextwriter \
        -D mapreduce.randomtextwriter.totalbytes=30000000 -D mapreduce.randomtextwriter.bytespermap=10000000 /input \
        >"$W/$name-randomtextwriter.log" 2>&1 || { tail -40 "$W/$name-randomtextwriter.log"; die "$name: randomtextwriter"; }
    say "$name: wordcount /input -> /output"
    docker compose -f docker/compose.yaml exec resourcemanager yarnctl-daemon client \
        org.apache.hadoop.util.RunJar /opt/hadoop/lib/hadoop-mapreduce-examples-2.7.7.jar wordcount /input /output \
        >"$W/$name-wordcount.log" 2>&1 || { tail -40 "$W/$name-wordcount.log"; die "$name: wordcount"; }
    grep -E 'Job job_[0-9_]+ completed|(Launched|Data-local|Rack-local) map tasks|Launched reduce tasks' \
        "$W/$name-wordcount.log" | sed 's/^.*INFO [A-Za-z.]*: *//; s/^[[:space:]]*/   /'
    docker compose -f docker/compose.yaml exec resourcemanager yarnctl-daemon client \
        org.apache.hadoop.fs.FsShell -ls /input /output 2>/dev/null | grep -v '^Found' | sed 's/^/   /'
    apps=$(curl -s 'http://localhost:8088/ws/v1/cluster/apps' | jq -r '.apps.app[] | "\(.name) \(.state) \(.finalStatus)"')
    while read -r line; do echo "   $line"; done <<<"$apps"
    [ "$(echo "$apps" | grep -c ' FINISHED SUCCEEDED$')" = 2 ] || die "$name: expected two SUCCEEDED apps"
    out=$(curl -s http://localhost:9090/api/v1/targets | jq -r '.data.activeTargets[] | "\(.scrapeUrl) \(.health)"')
    echo "   prometheus target: $out"
    [ "$out" = "http://serve:9464/metrics up" ] || die "$name: the Prometheus target is not up"
    out=$(curl -s 'http://localhost:8088/jmx?qry=Hadoop:service=ResourceManager,name=YarnctlShim' | jq -c '.beans[0] | {Delegated, ContainersByPolicy, ContainersNative, Fallback}')
    echo "   YarnctlShim: $out"
    SHIM_BEAN=$out
}

# a job that needs no input: pi with 2 maps; $1 names its log
pi() {
    docker compose -f docker/compose.yaml exec resourcemanager yarnctl-daemon client \
        org.apache.hadoop.util.RunJar /opt/hadoop/lib/hadoop-mapreduce-examples-2.7.7.jar pi 2 10 \
        >"$W/$1-pi.log" 2>&1 || { tail -40 "$W/$1-pi.log"; die "$1: pi"; }
    grep -E 'Job job_[0-9_]+ completed successfully' "$W/$1-pi.log" | sed 's/^.*INFO [A-Za-z.]*: *//; s/^/   /' ||
        { tail -40 "$W/$1-pi.log"; die "$1: pi did not complete successfully"; }
}
shim_bean() { curl -s 'http://localhost:8088/jmx?qry=Hadoop:service=ResourceManager,name=YarnctlShim' | jq -c "$1"; }
# SERVICE PATTERN: the first (last) line of its log matching, from the pattern on; non-zero when none.
# The log is read whole first: grep -m1 closing the pipe early would fail `podman logs` (pipefail)
first_line() { local log; log=$(podman logs "${PROJECT}_$1_1" 2>&1); grep -m1 -oE "$2.*" <<<"$log"; }
last_line() { local log; log=$(podman logs "${PROJECT}_$1_1" 2>&1); grep -oE "$2.*" <<<"$log" | tail -1 | grep .; }
# the count of native containers went up since $1: the shim's fallback placed the job's containers
natively_since() {
    local now
    now=$(shim_bean '.beans[0].ContainersNative')
    [ "$now" -gt "$1" ] || die "$2: no container placed natively ($1 -> $now)"
    echo "   $2: the job ran; containers placed natively $1 -> $now"
}

# bad input on the running shim cluster: serve without the RM's token, then a stopped serve. Each gives
# one clear log line and the cluster still runs jobs: the shim decides natively
serve_faults() {
    local before placed line refused
    say "bad input: serve without the RM's token (the token file gone, serve restarted: it makes its own)"
    docker compose -f docker/compose.yaml exec resourcemanager rm -f /var/lib/yarnctl/secrets/bridge.token
    docker compose -f docker/compose.yaml restart serve >/dev/null 2>&1 || die "compose restart serve"
    wait_healthy 120
    before=$(shim_bean '.beans[0].ContainersNative')
    placed=$(shim_bean '.beans[0].ContainersByPolicy')
    refused=$(refusals)
    pi bad-token
    [ "$(refusals)" -gt "$refused" ] || die "serve refused no connection: did the shim not call?"
    line=$(last_line serve 'refused a connection.*') || die "serve logged no refused connection"
    echo "   serve: $line"
    natively_since "$before" "a token serve does not share"
    [ "$(shim_bean '.beans[0].ContainersByPolicy')" = "$placed" ] || die "the policy placed containers without the token"

    say "bad input: serve stopped"
    docker compose -f docker/compose.yaml stop serve >/dev/null 2>&1 || die "compose stop serve"
    before=$(shim_bean '.beans[0].ContainersNative')
    pi no-serve
    line=$(last_line resourcemanager 'yarnctl shim: heartbeat decided natively') || die "the shim logged no fallback"
    echo "   resourcemanager: $line"
    natively_since "$before" "no serve"
}

# bad input at compose up: a policy yarnctl does not have. serve says so in one line (each time it is
# restarted) and the cluster runs jobs natively
bad_policy() {
    local before line
    say "bad input: YARNCTL_POLICY=no-such-policy: up"
    YARNCTL_POLICY=no-such-policy docker compose -f docker/compose.yaml up -d >"$W/up-bad-policy.log" 2>&1 ||
        { tail -40 "$W/up-bad-policy.log"; die "compose up"; }
    wait_healthy 360 serve
    line=$(first_line serve 'error: unknown policy') || die "serve logged no 'unknown policy' line"
    echo "   serve: $line"
    [ "$(podman logs "${PROJECT}_serve_1" 2>&1 | grep -c 'Traceback')" = 0 ] || die "a stack trace in serve's log"
    before=$(shim_bean '.beans[0].ContainersNative')
    pi bad-policy
    line=$(last_line resourcemanager 'yarnctl shim: heartbeat decided natively') || die "the shim logged no fallback"
    echo "   resourcemanager: $line"
    natively_since "$before" "no policy server"
    say "bad input: down"
    docker compose -f docker/compose.yaml down -v >/dev/null 2>&1
}

main() {
    trap teardown EXIT
    say "machine set-up"
    setup_machine
    images
    [ "${1:-}" = setup ] && { say "set-up done"; return; }
    [ -z "$(containers)" ] || die "containers of compose project $PROJECT exist already (podman ps -a); remove them first"

    say "building yarnctl/hadoop:2.7.7"
    docker build -f docker/Dockerfile -t yarnctl/hadoop:2.7.7 . >"$W/build.log" 2>&1 ||
        { tail -40 "$W/build.log"; die "image build"; }
    podman image inspect --format '{{.Id}} {{.Size}}' yarnctl/hadoop:2.7.7 |
        awk '{printf "   yarnctl/hadoop:2.7.7 %.12s, %d MB\n", $1, $2 / 1e6}'

    say "shim with policy dress: up"
    YARNCTL_POLICY=dress docker compose -f docker/compose.yaml up -d >"$W/up-shim.log" 2>&1 ||
        { tail -40 "$W/up-shim.log"; die "compose up"; }
    journey shim-dress
    echo "$SHIM_BEAN" | jq -e '.ContainersByPolicy > 0' >/dev/null || die "the policy placed no container: $SHIM_BEAN"
    docker compose -f docker/compose.yaml exec serve wc -l /var/lib/yarnctl/serve/decisions.jsonl |
        awk '{print "   decisions logged by serve: " $1}'
    # serve's health check leaves no trace in its log: no py4j connection, so nothing refused
    local before after
    before=$(refusals)
    for _ in 1 2 3; do podman healthcheck run "${PROJECT}_serve_1" >/dev/null || die "serve's health check failed"; done
    sleep 2
    after=$(refusals)
    [ "$after" = "$before" ] || die "serve logged $((after - before)) refused connection(s) for 3 health checks"
    echo "   serve's log: 3 more health checks, no refused connection ($after refused in the whole run)"
    serve_faults
    say "shim with policy dress: down"
    docker compose -f docker/compose.yaml down -v >/dev/null 2>&1

    bad_policy

    say "native CapacityScheduler: up"
    YARNCTL_SCHEDULER=capacity docker compose -f docker/compose.yaml up -d >"$W/up-capacity.log" 2>&1 ||
        { tail -40 "$W/up-capacity.log"; die "compose up"; }
    journey capacity
    echo "$SHIM_BEAN" | jq -e '.Delegated == null' >/dev/null || die "a shim bean under native capacity: $SHIM_BEAN"
    say "native CapacityScheduler: down"
    docker compose -f docker/compose.yaml down -v >/dev/null 2>&1

    [ -z "$(containers)" ] || die "containers left: $(containers | tr '\n' ' ')"
    [ -z "$(volumes)" ] || die "volumes left: $(volumes | tr '\n' ' ')"
    [ -z "$(podman pod ps -q)" ] || die "pods left"
    local s=$(( $(date +%s) - T0 ))
    say "docker-test passed in $((s / 60)) min $((s % 60)) s"
}

main "$@"
