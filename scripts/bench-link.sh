#!/usr/bin/env bash
# bench-compare's scans and queries with bigq-emulator behind a shaped link: the emulator in
# one network namespace, the clients in another, joined by a veth pair with `tc netem` on
# both ends. Two links: 10 ms RTT at 1 Gbit/s, and 30 ms RTT at 100 Mbit/s. Results go to
# bench/results/<date>-shaped-links/<link>/.
#
#   cargo build --release -p bigq-emulator -p bench-compare
#   sudo scripts/bench-link.sh [--runs N] [--contenders LIST] [--only LIST] [--links a,b]
#
# Needs root, iproute2 (`ip`, `tc`) and the release binaries (in $CARGO_TARGET_DIR or
# target/). Not run in CI. Only addresses of the two namespaces are used (10.232.0.0/30).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
bin="${CARGO_TARGET_DIR:-$repo/target}/release"

runs=5
contenders="bigq,bigq-streams-1,bigq-streams-4,bigq-streams-16,bigquery-rs,gcbq,python"
only="scan_arrow,scan_typed,query_const,query_1k,query_200k_rows,query_200k_arrow"
links="a,b"
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --contenders) contenders="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --links) links="$2"; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done

[[ $(id -u) -eq 0 ]] || { echo "bench-link.sh needs root (network namespaces)" >&2; exit 1; }
command -v ip >/dev/null && command -v tc >/dev/null \
  || { echo "bench-link.sh needs iproute2 (ip, tc)" >&2; exit 1; }
for b in bench-compare bigq-emulator contender-bigq; do
  [[ -x "$bin/$b" ]] || { echo "$bin/$b is missing: cargo build --release -p bigq-emulator -p bench-compare" >&2; exit 1; }
done
python="${BIGQ_PYTHON:-$repo/.venv/bin/python}"
if [[ ! -x "$python" ]]; then
  echo "note: no Python venv at $python (scripts/python-env.sh): the python contender is left out"
  contenders="$(tr ',' '\n' <<<"$contenders" | grep -vx python | paste -sd, -)"
fi

srv="bqlink-srv-$$"
cli="bqlink-cli-$$"
srv_if="bql$$s"
cli_if="bql$$c"
srv_ip=10.232.0.1
cli_ip=10.232.0.2
cleanup() {
  ip netns del "$srv" 2>/dev/null || true
  ip netns del "$cli" 2>/dev/null || true
}
trap cleanup EXIT

ip netns add "$srv"
ip netns add "$cli"
ip link add "$srv_if" netns "$srv" type veth peer name "$cli_if" netns "$cli"
ip -n "$srv" addr add "$srv_ip/30" dev "$srv_if"
ip -n "$cli" addr add "$cli_ip/30" dev "$cli_if"
for ns in "$srv" "$cli"; do ip -n "$ns" link set lo up; done
ip -n "$srv" link set "$srv_if" up
ip -n "$cli" link set "$cli_if" up

# The round trips need netem's delay; tbf alone would give rates without them.
if ! tc -n "$srv" qdisc replace dev "$srv_if" root netem delay 1ms 2>/dev/null; then
  echo "bench-link.sh: this kernel has no netem (sch_netem), which the links' delay needs" >&2
  exit 1
fi

# Half the round trip on each end's egress; a queue long enough for the bandwidth-delay
# product, so that netem does not drop what a router would buffer.
shape() { # delay_ms rate
  for pair in "$srv:$srv_if" "$cli:$cli_if"; do
    ip -n "${pair%%:*}" link set "${pair#*:}" up
    tc -n "${pair%%:*}" qdisc replace dev "${pair#*:}" root netem delay "$1ms" rate "$2" limit 100000
  done
}

day="$(date -u +%Y-%m-%d)"
for link in ${links//,/ }; do
  case "$link" in
    a) name="rtt10ms-1gbit"; shape 5 1gbit ;;
    b) name="rtt30ms-100mbit"; shape 15 100mbit ;;
    *) echo "unknown link $link (a or b)" >&2; exit 1 ;;
  esac
  rtt="$(ip netns exec "$cli" ping -c 3 -q "$srv_ip" | tail -1)"
  echo "link $name: $rtt"
  ip netns exec "$cli" "$bin/bench-compare" \
    --emulator-netns "$srv" --emulator-host "$srv_ip" --iface "$cli_if" \
    --contenders "$contenders" --only "$only" --runs "$runs" \
    --python "$python" --max-load 3 --quiet-timeout 10 --no-repeat \
    --label "$day-shaped-links/$name" --out "$repo/bench/results" "${extra[@]}"
  echo "link $name: ping $rtt" >> "$repo/bench/results/$day-shaped-links/$name/summary.md"
done
