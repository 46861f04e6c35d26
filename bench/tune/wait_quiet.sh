#!/usr/bin/env bash
# Waits (up to $1 seconds, default 600) until the machine has been idle for 3
# s (< 15 % of all cores busy), so a timing run does not share its cores with
# someone's build: 2-thread OpenMP timings collapse when a core is taken.
# Prints the busy fraction and load average it saw; exits 1 on timeout.
deadline=$(( $(date +%s) + ${1:-600} ))
busy() {
  read -r _ u1 n1 s1 i1 w1 q1 sq1 _ < /proc/stat
  sleep 3
  read -r _ u2 n2 s2 i2 w2 q2 sq2 _ < /proc/stat
  local work=$(( (u2 + n2 + s2 + q2 + sq2) - (u1 + n1 + s1 + q1 + sq1) ))
  local total=$(( work + (i2 + w2) - (i1 + w1) ))
  echo $(( total > 0 ? 100 * work / total : 100 ))
}
while :; do
  b=$(busy)
  if [ "$b" -lt 15 ]; then echo "quiet: ${b}% busy, $(uptime | sed 's/.*load/load/')"; exit 0; fi
  if [ "$(date +%s)" -ge "$deadline" ]; then echo "never quiet (last ${b}% busy), $(uptime | sed 's/.*load/load/')"; exit 1; fi
done
