# Helpers of the `tcsync watch` tests (source after lib.sh): start watch in
# the background with its JSON lines in $EVENTS, and wait for events by
# reading them (never by sleeping long).
EVENTS=$TMP/events.jsonl
WPID=""
SEEN=0  # lines of $EVENTS already matched by wait_event

stop_watch_on_exit() {
  [ -z "$WPID" ] || kill "$WPID" 2>/dev/null || true
  [ -z "${FIGHTER:-}" ] || kill "$FIGHTER" 2>/dev/null || true
  cleanup
}
trap stop_watch_on_exit EXIT INT TERM

# start_watch ARGS...: tcsync --netns $NS watch ARGS, events to $EVENTS
# (stdout is a file: JSON lines), stderr to $TMP/watch.err.
start_watch() {
  : >"$EVENTS"
  SEEN=0
  "$TCSYNC" --netns "$NS" watch "$@" >"$EVENTS" 2>"$TMP/watch.err" &
  WPID=$!
}

# wait_event EVENT [DEVICE] [SECONDS] [TEXT]: waits for the next line after
# the last one matched with "event":EVENT (EVENT may be alternatives: a|b),
# and "device":DEVICE, and TEXT (a fixed string) when given. Passes or
# fails; the line is in $EV.
wait_event() {
  local ev=$1 dev=${2:-} secs=${3:-5} text=${4:-} deadline line n pat
  pat="\"event\":\"($ev)\""
  deadline=$(($(date +%s%N) + secs * 1000000000))
  while :; do
    n=0
    while IFS= read -r line; do
      n=$((n + 1))
      [ "$n" -le "$SEEN" ] && continue
      [[ $line =~ $pat ]] || continue
      [ -z "$dev" ] || [[ $line == *"\"device\":\"$dev\""* ]] || continue
      [ -z "$text" ] || [[ $line == *"$text"* ]] || continue
      SEEN=$n
      EV=$line
      pass "event $ev${dev:+ $dev}${text:+ with '$text'}"
      return 0
    done <"$EVENTS"
    if [ "$(date +%s%N)" -gt "$deadline" ]; then
      fail "no event $ev${dev:+ $dev}${text:+ with '$text'} within ${secs}s; events:"
      sed 's/^/    /' "$EVENTS"; sed 's/^/    stderr: /' "$TMP/watch.err"
      return 1
    fi
    sleep 0.05
  done
}

# count_events EVENT: how many lines of $EVENTS are EVENT events.
count_events() { grep -c "\"event\":\"$1\"" "$EVENTS" || true; }

# cpu_ticks PID: user + system time in clock ticks (/proc/PID/stat fields 14, 15).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# stop_watch: SIGTERM; watch must exit 0 and say "stopped".
stop_watch() {
  local rc=0
  kill -TERM "$WPID"
  wait "$WPID" || rc=$?
  WPID=""
  [ "$rc" = 0 ] && pass "SIGTERM: watch exits 0" || fail "SIGTERM: watch exits $rc"
  wait_event stopped "" 1
  check_event_schema
}

# check_event_schema: every line watch printed is one JSON object valid
# against schemas/watch-event.schema.json (what consumers are promised).
check_event_schema() {
  local out
  if out=$(python3 - "$SCHEMAS/watch-event.schema.json" "$EVENTS" 2>&1 <<'P'
import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
bad = 0
lines = open(sys.argv[2]).read().splitlines()
for n, line in enumerate(lines, 1):
    errs = [e.message for e in v.iter_errors(json.loads(line))]
    if errs:
        bad += 1
        print("line %d: %s: %s" % (n, line[:200], errs))
print("%d events, %d invalid" % (len(lines), bad))
sys.exit(1 if bad or not lines else 0)
P
  ); then
    pass "events valid against watch-event.schema.json ($out)"
  else
    fail "events against watch-event.schema.json:"
    echo "$out" | sed 's/^/    /'
  fi
}
