#!/usr/bin/env bash
# s3-test-store.sh — a throwaway, real S3 store for OmniGraph-C's tests: a single-node Ceph
# RADOS Gateway (Debian 12 packages, Ceph 16.x) whose one OSD keeps everything in RAM
# (memstore).  It listens on 127.0.0.1 only, lives in one directory, and honours
# `PUT If-None-Match: *` (412 on an existing key), which the store contract needs.
#
#   s3-test-store.sh install   apt-get the Ceph packages when they are missing (root; ~30 s once)
#   s3-test-store.sh start     install if needed, start mon + osd + rgw on free loopback ports,
#                              create a user and a bucket; prints the environment to use
#                              (export lines) on stdout and writes it to $DIR/env.
#                              Idempotent: a store already running in $DIR is reused.
#   s3-test-store.sh env       print the environment of the running store
#   s3-test-store.sh status    exit 0 when the store in $DIR answers
#   s3-test-store.sh stop      stop the daemons (by pid) and delete $DIR; a no-op when nothing runs
#   s3-test-store.sh rgw-stop  kill radosgw only (an outage of the endpoint; the data stays in RADOS)
#   s3-test-store.sh rgw-start start radosgw again and wait until it answers
#
# Knobs (environment): OG_S3_STORE_DIR (default /tmp/og-s3-store), OG_S3_STORE_PORT (RGW port;
# default: the first free one from 17480), OG_S3_STORE_MON_PORT (default: first free from
# 13300), OG_S3_STORE_BUCKET (og-test), OG_S3_STORE_ACCESS_KEY / OG_S3_STORE_SECRET_KEY,
# OG_S3_STORE_MEM_BYTES (memstore capacity, default 512 MiB), OG_S3_STORE_KEEP=1 (stop keeps
# the directory and its logs).
#
# Why the configuration looks the way it does (each line fixes a failure seen without it):
# radosgw defaults to secure mon connections, impossible without cephx, so `ms mon client mode
# = crc`; the mon batches map updates once a second and rgw creates ~8 pools one by one, so
# paxos intervals are shortened (start drops from ~15 s to ~2 s); `cluster addr` keeps the OSD
# off 0.0.0.0; every log/run path points into $DIR so nothing is left in /var.
# `tcp_nodelay=1` on the beast frontend: without it every small GET on a kept-alive
# connection takes ~44 ms (Nagle on RGW's separate header and body writes meets the
# client's delayed ACK); with it ~2 ms.
set -euo pipefail

DIR=${OG_S3_STORE_DIR:-/tmp/og-s3-store}
BUCKET=${OG_S3_STORE_BUCKET:-og-test}
AK=${OG_S3_STORE_ACCESS_KEY:-OGTESTACCESSKEY}
SK=${OG_S3_STORE_SECRET_KEY:-OGTESTSECRETKEY0123456789}
MEM_BYTES=${OG_S3_STORE_MEM_BYTES:-536870912}
REGION=us-east-1
export CEPH_CONF="$DIR/ceph.conf"
BINARIES="ceph-mon ceph-osd radosgw radosgw-admin ceph monmaptool uuidgen curl"

log() { printf '[s3-test-store] %s\n' "$*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
pid_of() { local f="$DIR/run/$1.pid"; if [ -s "$f" ]; then cat "$f"; fi; }
# a pid that runs and is not a zombie (an exited daemon stays a zombie until init reaps it)
running_pid() {
    local st
    st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
alive() { local p; p=$(pid_of "$1"); [ -n "$p" ] && running_pid "$p"; }
cephq() { timeout 30 ceph --connect-timeout 20 "$@"; }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { # first port >= $1 that nothing listens on
    local p=$1
    while port_busy "$p"; do p=$((p + 1)); [ "$p" -lt $(($1 + 500)) ] || return 1; done
    echo "$p"
}
http_code() { curl -s --noproxy '*' --max-time 2 -o /dev/null -w '%{http_code}' "$@" 2>/dev/null || true; }

fail() {
    log "ERROR: $*"
    if [ -d "$DIR/log" ]; then
        local f
        for f in "$DIR"/log/*.log "$DIR"/log/*.out; do
            [ -s "$f" ] && { log "--- last lines of $f"; tail -n 12 "$f" >&2; }
        done
    fi
    if [ "${STARTING:-0}" = 1 ]; then log "stopping what was started (logs kept in $DIR)"; OG_S3_STORE_KEEP=1 cmd_stop; fi
    exit 1
}

safe_rmdir() { # never delete a directory this script did not create
    [ -n "$DIR" ] && [ "$DIR" != / ] || fail "bad OG_S3_STORE_DIR '$DIR'"
    [ -e "$DIR" ] || return 0
    [ -e "$DIR/.og-s3-test-store" ] || [ -z "$(ls -A "$DIR")" ] \
        || fail "$DIR exists and was not made by this script; refusing to delete it"
    rm -rf "$DIR"
}

have_all() { local b; for b in $BINARIES; do command -v "$b" >/dev/null 2>&1 || return 1; done; }

cmd_install() {
    have_all && return 0
    [ "$(id -u)" = 0 ] || fail "Ceph packages missing and not root: apt-get install ceph-mon ceph-osd radosgw ceph-common uuid-runtime curl"
    local t0; t0=$(now)
    log "installing ceph-mon ceph-osd radosgw ceph-common uuid-runtime (Debian packages)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -q --no-install-recommends ceph-mon ceph-osd radosgw ceph-common uuid-runtime curl >/dev/null
    have_all || fail "packages installed but a binary is still missing"
    log "installed in $(since "$t0")s"
}

write_conf() { # fsid mon_port rgw_port
    cat > "$CEPH_CONF" <<EOF
[global]
fsid = $1
mon host = v2:127.0.0.1:$2
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
run dir = $DIR/run
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
log file = $DIR/log/\$name.log
mon cluster log file = $DIR/log/cluster.log
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
mon data avail crit = 0
mon data avail warn = 0
client mount timeout = 30
paxos propose interval = 0.05
paxos min wait = 0.01
[mon.a]
mon data = $DIR/mon
[osd.0]
osd data = $DIR/osd
osd objectstore = memstore
memstore device bytes = $MEM_BYTES
osd class load list = *
osd class default list = *
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$3 tcp_nodelay=1
rgw data = $DIR/rgw
rgw thread pool size = 32
rgw init timeout = 60
EOF
}

env_text() { # rgw_port
    cat <<EOF
export AWS_ENDPOINT_URL=http://127.0.0.1:$1
export AWS_ACCESS_KEY_ID=$AK
export AWS_SECRET_ACCESS_KEY=$SK
export AWS_REGION=$REGION
export OG_S3_BUCKET=$BUCKET
EOF
}

running() { # the daemons are alive and rgw answers
    [ -s "$DIR/env" ] && alive mon.a && alive osd.0 && alive client.rgw || return 1
    local ep; ep=$(sed -n 's/^export AWS_ENDPOINT_URL=//p' "$DIR/env")
    [ "$(http_code "$ep/")" = 200 ]
}

cmd_start() {
    if running; then log "already running in $DIR"; cat "$DIR/env"; return 0; fi
    cmd_install
    local t0 fsid osd_uuid id i mon_port rgw_port
    t0=$(now)
    if alive mon.a || alive osd.0 || alive client.rgw; then
        log "a half-working store is in $DIR: stopping it first"; cmd_stop
    fi
    rgw_port=${OG_S3_STORE_PORT:-$(free_port 17480)} || fail "no free port for radosgw"
    mon_port=${OG_S3_STORE_MON_PORT:-$(free_port 13300)} || fail "no free port for the mon"
    port_busy "$rgw_port" && fail "127.0.0.1:$rgw_port is already in use"
    port_busy "$mon_port" && fail "127.0.0.1:$mon_port is already in use"
    safe_rmdir
    mkdir -p "$DIR"/{mon,osd,run,log,rgw}
    touch "$DIR/.og-s3-test-store"
    STARTING=1
    fsid=$(uuidgen)
    write_conf "$fsid" "$mon_port" "$rgw_port"

    monmaptool --create --clobber --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$DIR/monmap" >/dev/null \
        || fail "monmaptool failed"
    ceph-mon -i a --mkfs --monmap "$DIR/monmap" --keyring /dev/null >"$DIR/log/mon-mkfs.out" 2>&1 || fail "mon mkfs failed"
    ceph-mon -i a >"$DIR/log/mon-start.out" 2>&1 || fail "ceph-mon failed"
    cephq mon stat >/dev/null 2>&1 || fail "mon not answering"

    osd_uuid=$(uuidgen)
    id=$(cephq osd new "$osd_uuid" 2>>"$DIR/log/osd-new.out") || fail "osd new failed"
    [ "$id" = 0 ] || fail "expected osd id 0, got '$id'"
    ceph-osd -i 0 --mkfs --osd-uuid "$osd_uuid" --no-mon-config >"$DIR/log/osd-mkfs.out" 2>&1 || fail "osd mkfs failed"
    ceph-osd -i 0 >"$DIR/log/osd-start.out" 2>&1 || fail "ceph-osd failed"
    for i in $(seq 1 150); do
        cephq osd dump 2>/dev/null | grep -q '^osd\.0 up' && break
        [ "$i" = 150 ] && fail "osd.0 not up after 30 s"
        sleep 0.2
    done

    radosgw -n client.rgw >"$DIR/log/rgw-start.out" 2>&1 || fail "radosgw failed"
    for i in $(seq 1 300); do
        [ "$(http_code "http://127.0.0.1:$rgw_port/")" = 200 ] && break
        [ "$i" = 300 ] && fail "radosgw not answering on 127.0.0.1:$rgw_port after 60 s"
        if [ "$i" -ge 10 ] && ! alive client.rgw; then fail "radosgw exited"; fi
        sleep 0.2
    done

    timeout 60 radosgw-admin user create --uid=og-tester --display-name=og-tester \
        --access-key="$AK" --secret-key="$SK" >"$DIR/log/user-create.out" 2>&1 || fail "user create failed"
    local code
    code=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' --aws-sigv4 "aws:amz:$REGION:s3" --user "$AK:$SK" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -X PUT "http://127.0.0.1:$rgw_port/$BUCKET" || true)
    [ "$code" = 200 ] || fail "bucket create failed (HTTP $code)"

    env_text "$rgw_port" > "$DIR/env"
    STARTING=0
    log "ready in $(since "$t0")s on 127.0.0.1:$rgw_port, bucket $BUCKET (env in $DIR/env)"
    cat "$DIR/env"
}

# TERM the given pids, wait up to 3 s for them to exit, KILL what is left.
term_wait() {
    local p i left
    for p in "$@"; do kill -TERM "$p" 2>/dev/null || true; done
    for i in $(seq 1 30); do
        left=""
        for p in "$@"; do running_pid "$p" && left="$left $p"; done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
}

cmd_stop() {
    # radosgw keeps no state of its own (everything is in RADOS) and takes 1.5 s or more to
    # honour TERM, so it gets KILL; then the osd (fast while its mon is up: without the mon it
    # waits 5 s at shutdown), then the mon.
    local p
    p=$(pid_of client.rgw)
    if [ -n "$p" ] && running_pid "$p"; then
        kill -KILL "$p" 2>/dev/null || true
        for _ in $(seq 1 30); do running_pid "$p" || break; sleep 0.1; done
    fi
    p=$(pid_of osd.0); if [ -n "$p" ] && running_pid "$p"; then term_wait "$p"; fi
    p=$(pid_of mon.a); if [ -n "$p" ] && running_pid "$p"; then term_wait "$p"; fi
    if [ "${OG_S3_STORE_KEEP:-0}" = 1 ]; then log "stopped; kept $DIR"
    else STARTING=0; safe_rmdir; log "stopped"; fi
}

# An outage of the S3 endpoint alone (the fault tests): radosgw keeps no state of its own, so
# killing it is the store going away mid-request (connections refused from then on), and
# starting it again brings back everything that was acknowledged (it lives in RADOS).
cmd_rgw_stop() {
    local p; p=$(pid_of client.rgw)
    [ -n "$p" ] && running_pid "$p" || fail "no radosgw running in $DIR"
    kill -KILL "$p" 2>/dev/null || true
    for _ in $(seq 1 50); do running_pid "$p" || break; sleep 0.1; done
    running_pid "$p" && fail "radosgw $p did not exit"
    log "radosgw stopped"
}

cmd_rgw_start() {
    alive client.rgw && { log "radosgw already running"; return 0; }
    local ep t0 i; ep=$(sed -n 's/^export AWS_ENDPOINT_URL=//p' "$DIR/env"); t0=$(now)
    [ -n "$ep" ] || fail "no store in $DIR"
    radosgw -n client.rgw >>"$DIR/log/rgw-start.out" 2>&1 || fail "radosgw failed"
    for i in $(seq 1 300); do
        [ "$(http_code "$ep/")" = 200 ] && break
        [ "$i" = 300 ] && fail "radosgw not answering at $ep after 60 s"
        sleep 0.2
    done
    log "radosgw back in $(since "$t0")s"
}

case "${1:-}" in
    install) cmd_install ;;
    rgw-stop) cmd_rgw_stop ;;
    rgw-start) cmd_rgw_start ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    env) running || fail "no store running in $DIR"; cat "$DIR/env" ;;
    status) running ;;
    *) sed -n '2,22p' "$0" >&2; exit 2 ;;
esac
