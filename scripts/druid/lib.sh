# Shared by scripts/druid/{start,stop,status,smoke}; sourced, not run.
# Layout under $SEGOPS_DRUID_HOME (default /tmp/segops-druid):
#   conf/   rendered copy of scripts/druid/conf      log/  one <service>.log per JVM, maven.log, derby.log
#   run/    <service>.pid, ports.env                 var/  zk, Derby, deep storage, segment cache, task dirs

DRUID_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DRUID_HOME=${SEGOPS_DRUID_HOME:-/tmp/segops-druid}
DRUID_HOST=127.0.0.1

# Start order; stop goes in reverse.
# router-noproxy: a second Router without the management proxy, so the real-Druid stage can show what segops says
# when pointed at one (docs/real-druid.md).
DRUID_SERVICES=(zk coordinator-overlord historical broker indexer router router-noproxy)

# Ports a running cluster was started with win over the environment, so status/stop/smoke agree with start.
if [[ -f $DRUID_HOME/run/ports.env ]]; then
  # shellcheck disable=SC1091
  source "$DRUID_HOME/run/ports.env"
fi
ZK_PORT=${ZK_PORT:-${SEGOPS_DRUID_ZK_PORT:-2181}}
DERBY_PORT=${DERBY_PORT:-${SEGOPS_DRUID_DERBY_PORT:-1527}}
COORDINATOR_PORT=${COORDINATOR_PORT:-${SEGOPS_DRUID_COORDINATOR_PORT:-8081}}
BROKER_PORT=${BROKER_PORT:-${SEGOPS_DRUID_BROKER_PORT:-8082}}
HISTORICAL_PORT=${HISTORICAL_PORT:-${SEGOPS_DRUID_HISTORICAL_PORT:-8083}}
INDEXER_PORT=${INDEXER_PORT:-${SEGOPS_DRUID_INDEXER_PORT:-8091}}
ROUTER_PORT=${ROUTER_PORT:-${SEGOPS_DRUID_ROUTER_PORT:-8888}}
# The Router's HTTPS port (by default 9088, Druid's tlsPort for a Router), with a certificate from a CA made per
# cluster, and the second Router's port: both follow the Router's, so a cluster on shifted ports shifts them too.
ROUTER_TLS_PORT=${ROUTER_TLS_PORT:-${SEGOPS_DRUID_ROUTER_TLS_PORT:-$((ROUTER_PORT + 200))}}
ROUTER_NOPROXY_PORT=${ROUTER_NOPROXY_PORT:-${SEGOPS_DRUID_ROUTER_NOPROXY_PORT:-$((ROUTER_PORT + 1))}}

log() { printf 'druid: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

svc_port() {
  case $1 in
  zk) echo "$ZK_PORT" ;;
  coordinator-overlord) echo "$COORDINATOR_PORT" ;;
  broker) echo "$BROKER_PORT" ;;
  historical) echo "$HISTORICAL_PORT" ;;
  indexer) echo "$INDEXER_PORT" ;;
  router) echo "$ROUTER_PORT" ;;
  router-noproxy) echo "$ROUTER_NOPROXY_PORT" ;;
  *) die "unknown service $1" ;;
  esac
}

svc_url() { echo "http://$DRUID_HOST:$(svc_port "$1")"; }

pid_file() { echo "$DRUID_HOME/run/$1.pid"; }

# Prints the pid of a live process started by us for this service and home, or fails. Checking the command line
# (not just kill -0) keeps a recycled pid from being mistaken for, or killed as, one of ours.
svc_pid() {
  local f pid cmdline
  f=$(pid_file "$1")
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == *"-Dsegops.druid.home=$DRUID_HOME "* && $cmdline == *"-Dsegops.druid.service=$1 "* ]] || return 1
  echo "$pid"
}

# bash -c so that the "connection refused" message of a failed /dev/tcp open can be silenced.
port_in_use() { bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$DRUID_HOST" "$1" 2>/dev/null; }

# Healthy means: ZooKeeper answers "imok"; a Druid service's /status/health says true, and the Broker and
# Historical also report their segment view / cache as initialized.
svc_healthy() {
  local port
  port=$(svc_port "$1")
  case $1 in
  zk)
    local reply
    reply=$(timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1" && printf ruok >&3 && cat <&3' "$DRUID_HOST" "$port" 2>/dev/null)
    [[ $reply == imok ]]
    ;;
  *)
    [[ $(curl -s -m 2 "http://$DRUID_HOST:$port/status/health" 2>/dev/null) == true ]] || return 1
    case $1 in
    broker) curl -sf -m 2 -o /dev/null "http://$DRUID_HOST:$port/druid/broker/v1/readiness" ;;
    historical) curl -sf -m 2 -o /dev/null "http://$DRUID_HOST:$port/druid/historical/v1/readiness" ;;
    esac
    ;;
  esac
}

log_tail() {
  local f=$DRUID_HOME/log/$1.log
  if [[ -f $f ]]; then
    log "last 40 lines of $f:"
    tail -n 40 "$f" >&2
  fi
}
