#!/bin/sh
# truegreen's trial probe for images without Python: what POSIX sh can see.
#
# Prints one JSON line of the same schema as probe.py ("probe_schema": 1, "runtime": "sh";
# docs/trial.md): /dev/shm's size (df), the NVIDIA driver (/proc/driver/nvidia/version,
# nvidia-smi), the dataset mount's first MiB read with dd (read-only: dd writes to /dev/null).
# The GPU libraries, the TCP exchange and the all-reduce need a language with sockets: their
# parts say "unavailable". Same inputs as probe.py: TRUEGREEN_PROBE_SHM_PATH,
# TRUEGREEN_PROBE_SHM_NEED_MIB, TRUEGREEN_PROBE_DATA, TRUEGREEN_PROBE_READ_MIB,
# TRUEGREEN_PROBE_GPUS, TRUEGREEN_PROBE_RANK, TRUEGREEN_PROBE_WORLD. Its first argument says
# why probe.py did not run (the trial's launcher, pods.py `_LAUNCHER`: an image's python3 older
# than probe.py needs), by default that the image has no Python.
LC_ALL=C
export LC_ALL
no_python=${1:-no Python in the image}

esc() {
	# A JSON string's inside: backslashes and quotes escaped, control characters dropped,
	# at most 300 characters.
	printf '%s' "$1" | tr -d '\000-\037' | cut -c1-300 | sed 's/\\/\\\\/g; s/"/\\"/g'
}

num() {
	# The setting if it is a whole number in range, else the default.
	case "$1" in
	'' | *[!0-9]*) echo "$2" ;;
	*) if [ "$1" -gt "$3" ]; then echo "$3"; else echo "$1"; fi ;;
	esac
}

shm_path=${TRUEGREEN_PROBE_SHM_PATH:-/dev/shm}
need_mib=$(num "$TRUEGREEN_PROBE_SHM_NEED_MIB" 0 16777216)
read_mib=$(num "$TRUEGREEN_PROBE_READ_MIB" 64 1024)
[ "$read_mib" -ge 1 ] || read_mib=1
gpus=$(num "$TRUEGREEN_PROBE_GPUS" 0 1024)
rank=$(num "$TRUEGREEN_PROBE_RANK" 0 1048576)
world=$(num "$TRUEGREEN_PROBE_WORLD" 1 64)
data=${TRUEGREEN_PROBE_DATA:-}

# /dev/shm: df -P prints 1024-byte blocks with -k, one line per file system.
if [ -d "$shm_path" ]; then
	sizes=$(df -Pk "$shm_path" 2>/dev/null | awk 'NR == 2 { printf "%.0f %.0f\n", $2 * 1024, $4 * 1024 }')
	if [ -n "$sizes" ]; then
		set -- $sizes
		shm="{\"path\":\"$(esc "$shm_path")\",\"status\":\"ok\",\"size_bytes\":$1,\"free_bytes\":$2,\"need_bytes\":$((need_mib * 1048576))}"
	else
		shm="{\"path\":\"$(esc "$shm_path")\",\"status\":\"error\",\"error\":\"df could not read it\",\"need_bytes\":$((need_mib * 1048576))}"
	fi
else
	shm="{\"path\":\"$(esc "$shm_path")\",\"status\":\"absent\",\"need_bytes\":$((need_mib * 1048576))}"
fi

# The driver: the kernel module's version line, then nvidia-smi.
version=null
if [ -r /proc/driver/nvidia/version ]; then
	v=$(head -n 1 /proc/driver/nvidia/version | tr ' ' '\n' | grep -E '^[0-9]+\.[0-9.]+$' | head -n 1)
	[ -n "$v" ] && version="\"$(esc "$v")\""
fi
if command -v nvidia-smi >/dev/null 2>&1; then
	smi=true
	rows=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader,nounits 2>/dev/null | head -n 16)
	list=""
	old_ifs=$IFS
	IFS='
'
	for row in $rows; do
		list="$list${list:+,}\"$(esc "$row")\""
	done
	IFS=$old_ifs
	if [ "$version" = null ] && [ -n "$rows" ]; then
		v=$(printf '%s\n' "$rows" | head -n 1 | cut -d, -f2 | tr -d ' ')
		[ -n "$v" ] && version="\"$(esc "$v")\""
	fi
	smi_gpus=",\"nvidia_smi_gpus\":[$list]"
else
	smi=false
	smi_gpus=""
fi
gpu="{\"status\":\"unavailable\",\"why\":\"$(esc "$no_python")\",\"requested\":$gpus,\"library\":null,\"libraries\":[],\"driver\":{\"version\":$version,\"nvidia_smi\":$smi$smi_gpus}}"

# The dataset: the first read_mib MiB of its files (to the next 64 KiB block), each read by dd
# into /dev/null; dd's own summary line gives the bytes and the seconds.
if [ -z "$data" ]; then
	dataset="{\"status\":\"skipped\"}"
elif [ ! -e "$data" ]; then
	dataset="{\"path\":\"$(esc "$data")\",\"status\":\"absent\"}"
else
	limit=$((read_mib * 1048576))
	total=0
	files=0
	seconds=0
	failure=""
	list=$(find "$data" -type f 2>/dev/null | head -n 1000)
	old_ifs=$IFS
	IFS='
'
	for file in $list; do
		left=$(((limit - total + 65535) / 65536))
		[ "$left" -gt 0 ] || break
		summary=$(dd if="$file" of=/dev/null bs=65536 count="$left" 2>&1)
		if [ $? -ne 0 ]; then
			failure=$(printf '%s\n' "$summary" | sed -n '/dd:/{p;q;}')
			break
		fi
		files=$((files + 1))
		got=$(printf '%s\n' "$summary" | awk '/bytes/ { print $1; exit }')
		took=$(printf '%s\n' "$summary" | awk '/bytes/ { for (i = 2; i <= NF; i++) if ($i == "s," || $i == "s" || $i == "seconds," || $i == "seconds") { print $(i - 1); exit } }')
		total=$((total + ${got:-0}))
		seconds=$(awk -v a="$seconds" -v b="${took:-0}" 'BEGIN { printf "%.3f", a + b }')
	done
	IFS=$old_ifs
	if [ -n "$failure" ]; then
		dataset="{\"path\":\"$(esc "$data")\",\"status\":\"unreadable\",\"error\":\"$(esc "$failure")\",\"bytes_read\":$total,\"files\":$files}"
	elif [ "$total" -eq 0 ]; then
		dataset="{\"path\":\"$(esc "$data")\",\"status\":\"empty\",\"bytes_read\":0,\"files\":$files}"
	else
		rate=$(awk -v b="$total" -v s="$seconds" 'BEGIN { if (s > 0) printf "%.1f", b / 1048576 / s; else print "null" }')
		dataset="{\"path\":\"$(esc "$data")\",\"status\":\"ok\",\"bytes_read\":$total,\"files\":$files,\"seconds\":$seconds,\"mib_per_s\":$rate,\"limit_bytes\":$limit}"
	fi
fi

if [ "$world" -gt 1 ]; then
	tcp="{\"status\":\"unavailable\",\"why\":\"sh has no sockets: $(esc "$no_python")\"}"
else
	tcp="{\"status\":\"skipped\"}"
fi
printf '{"probe_schema":1,"runtime":"sh","rank":%s,"world":%s,"gpu":%s,"shm":%s,"data":%s,"tcp":%s,"collective":{"status":"unavailable","why":"%s"}}\n' \
	"$rank" "$world" "$gpu" "$shm" "$dataset" "$tcp" "$(esc "$no_python")"
