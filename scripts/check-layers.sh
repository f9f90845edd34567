#!/usr/bin/env bash
# The collector's stages, lowest first: a file includes only headers of its own stage and
# of stages below it (run by `make unit` and `make test`). Prints each include that climbs.
set -uo pipefail
cd "$(dirname "$0")/.."
stages=(base host sources join log views export session cmd)
rank() {
	local i
	for i in "${!stages[@]}"; do
		[ "${stages[$i]}" = "$1" ] && { echo "$i"; return; }
	done
	echo -1
}
bad=0 n=0
for f in user/*/*.[ch]; do
	own=$(rank "$(basename "$(dirname "$f")")")
	if [ "$own" -lt 0 ]; then
		echo "check-layers: $f: user/$(basename "$(dirname "$f")")/ is no stage (${stages[*]})"
		bad=1
		continue
	fi
	while IFS=: read -r line inc; do
		n=$((n + 1))
		stage=${inc%%/*}
		r=$(rank "$stage")
		if [ "$r" -lt 0 ] || [ "$r" -gt "$own" ]; then
			echo "check-layers: $f:$line includes \"$inc\": ${stage} is above $(basename "$(dirname "$f")")"
			bad=1
		fi
	done < <(grep -n '^#include "[a-z_]*/' "$f" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/')
done
[ $bad -eq 0 ] && echo "check-layers: $n includes in user/, none climbs (${stages[*]})"
exit $bad
