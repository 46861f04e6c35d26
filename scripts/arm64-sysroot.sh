#!/usr/bin/env bash
# Assembles an arm64 (aarch64) sysroot for cross-building the lean tunefarm
# measurement worker from Debian 12's own arm64 packages, without touching
# the host: apt runs on a private state (its own sources.list, lists, cache
# and an empty dpkg status file, all under DIR/apt), never a multiarch
# install. The result is what cmake/toolchains/aarch64-linux-gnu.cmake builds
# against and what `qemu-aarch64 -L DIR` runs programs on.
#
#   scripts/arm64-sysroot.sh [--refresh] [DIR]    default DIR: build-arm64/sysroot
#
# What it holds: the worker's libraries (gRPC C++, Protobuf, OpenSSL, zlib,
# nlohmann-json, CLI11) with everything they Depend on, as dpkg -x unpacks them,
# with Debian 12's merged /usr (lib -> usr/lib) and every absolute symlink
# made relative. The C and C++ runtime the cross compiler links against is its
# own (Debian's *-arm64-cross packages, the same glibc 2.36 and GCC 12); the
# sysroot's libc6 and libstdc++6 are what the programs run on under qemu.
#
# A stamp file (DIR/.tunefarm-sysroot) holds the request and the resolved
# package versions: when it matches, the script exits at once without the
# network. --refresh asks the mirror again and re-unpacks only when a
# version changed. The Debian mirror is the host's own (from
# /etc/apt/sources.list.d/*.sources, *.list and /etc/apt/sources.list, its
# bookworm* suites); TUNEFARM_ARM64_SOURCES names a sources.list to use instead.
#
# Exit status: 0 done, 1 usage or a missing host tool, 2 the mirror could not
# be reached, 3 a package could not be resolved or fetched, 4 the sysroot is
# incomplete after unpacking.
set -euo pipefail

# The -dev packages the worker builds against; their Depends come along.
# protobuf-compiler-grpc: gRPC's CMake config (gRPCTargets.cmake) refuses to
# load unless its plugins exist under the prefix, so find_package(gRPC) needs
# the arm64 ones present; builds still run the host's grpc_cpp_plugin.
# libcli11-dev: the worker's command line (header-only, architecture all).
readonly kPackages=(libgrpc++-dev libprotobuf-dev libssl-dev zlib1g-dev libc6-dev nlohmann-json3-dev
                    protobuf-compiler-grpc libcli11-dev)
# Packages of the dependency closure the sysroot does not need: documentation
# only (gcc-12-base), arm64 programs the host runs natively instead (ldd,
# rpcgen, pkg-config) and libtirpc's /etc/netconfig.
readonly kSkipped=(gcc-12-base libc-dev-bin rpcsvc-proto pkgconf pkgconf-bin libpkgconf3 libtirpc-common)
# Bumped when the layout the script produces changes, so old sysroots are redone.
readonly kLayoutVersion=1
# Files whose presence says the unpacked tree is usable.
readonly kRequiredFiles=(
  lib/ld-linux-aarch64.so.1 usr/lib/aarch64-linux-gnu/libc.so.6
  usr/lib/aarch64-linux-gnu/libstdc++.so.6 usr/include/grpcpp/grpcpp.h
  usr/lib/aarch64-linux-gnu/libgrpc++.so usr/lib/aarch64-linux-gnu/libprotobuf.so
  usr/lib/aarch64-linux-gnu/libssl.so usr/lib/aarch64-linux-gnu/libz.so
  usr/include/nlohmann/json.hpp usr/include/CLI/CLI.hpp
)

Fail() {  # Fail STATUS MESSAGE...
  local status=$1; shift
  echo "arm64-sysroot: error: $*" >&2
  exit "$status"
}

refresh=0
dir=""
for arg in "$@"; do
  case "$arg" in
    --refresh) refresh=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) Fail 1 "unknown option $arg (usage: arm64-sysroot.sh [--refresh] [DIR])" ;;
    *) [ -z "$dir" ] || Fail 1 "more than one DIR given"; dir=$arg ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${dir:-$repo/build-arm64/sysroot}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
for tool in apt-get dpkg-deb realpath flock; do
  command -v "$tool" >/dev/null 2>&1 || Fail 1 "$tool not found: this script needs Debian's apt and dpkg"
done

start=$SECONDS
apt_dir=$dir/apt
stamp=$dir/.tunefarm-sysroot
request="layout=$kLayoutVersion packages=${kPackages[*]} skipped=${kSkipped[*]} sources=${TUNEFARM_ARM64_SOURCES:-host}"
mkdir -p "$apt_dir"
# One assembly at a time per sysroot (ctest may start the smoke test while a
# developer runs this script by hand).
exec 9>"$apt_dir/lock"
flock 9

Complete() {
  local f
  for f in "${kRequiredFiles[@]}"; do [ -e "$dir/$f" ] || return 1; done
}
SysrootSize() { du -sh --exclude=apt "$dir" | cut -f1; }

if [ "$refresh" = 0 ] && [ -f "$stamp" ] && [ "$(head -1 "$stamp")" = "$request" ] && Complete; then
  echo "arm64-sysroot: $dir is up to date ($(($(wc -l < "$stamp") - 1)) packages, $(SysrootSize)," \
       "$((SECONDS - start)) s); --refresh asks the mirror for newer versions"
  exit 0
fi

# --- The private apt state -------------------------------------------------
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/empty.d" "$apt_dir/debs"
: > "$apt_dir/status"

# Writes the host's Debian 12 entries as one-line sources restricted to arm64.
HostSources() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && enabled != "no" && uris != "") {
          opt = "arch=arm64"
          if (signed ~ /^\//) opt = opt " signed-by=" signed
          n = split(uris, u, " "); m = split(suites, s, " ")
          for (i = 1; i <= n; i++) for (j = 1; j <= m; j++)
            print "deb [" opt "] " u[i] " " s[j] " " components
        }
        types = uris = suites = components = signed = enabled = ""
      }
      /^#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[A-Za-z-]+:/ {
        key = tolower(substr($0, 1, index($0, ":") - 1))
        val = substr($0, index($0, ":") + 1); gsub(/^[ \t]+|[ \t]+$/, "", val)
        if (key == "types") types = val; else if (key == "uris") uris = val
        else if (key == "suites") suites = val; else if (key == "components") components = val
        else if (key == "signed-by") signed = val; else if (key == "enabled") enabled = tolower(val)
      }
      END { flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '
      $1 != "deb" { next }
      {
        opt = "arch=arm64"; rest = $0; sub(/^deb[ \t]+/, "", rest)
        if (rest ~ /^\[/) {
          opts = substr(rest, 2, index(rest, "]") - 2); rest = substr(rest, index(rest, "]") + 1)
          n = split(opts, o, " ")
          for (i = 1; i <= n; i++) if (o[i] ~ /^signed-by=/) opt = opt " " o[i]
        }
        sub(/^[ \t]+/, "", rest)
        print "deb [" opt "] " rest
      }' "$f"
  done
}

if [ -n "${TUNEFARM_ARM64_SOURCES:-}" ]; then
  [ -f "$TUNEFARM_ARM64_SOURCES" ] || Fail 1 "TUNEFARM_ARM64_SOURCES=$TUNEFARM_ARM64_SOURCES is not a file"
  cp "$TUNEFARM_ARM64_SOURCES" "$apt_dir/sources.list"
else
  # Only Debian 12's suites: a third-party repository the host also uses
  # (nodesource, a cloud SDK) has nothing for this sysroot.
  HostSources | awk '$0 ~ /\] [^ ]+ bookworm[-a-z]* /' | sort -u > "$apt_dir/sources.list"
  [ -s "$apt_dir/sources.list" ] ||
    Fail 1 "no Debian 12 (bookworm) mirror in /etc/apt/sources.list{,.d}; set TUNEFARM_ARM64_SOURCES to a sources.list"
fi

# apt's own configuration is private too: the host's apt.conf.d carries hooks
# (PackageKit's Post-Invoke, cache cleaners) that must not run for this
# state. Only its Acquire settings (proxies, retries, Check-Valid-Until)
# carry over; the index targets are apt's built-in ones.
{
  echo "Dir::Etc::Parts \"$apt_dir/empty.d\";"
  echo 'Dir::Etc::Main "/dev/null";'
  # No binary caches (70 MiB): apt reads the lists afresh the few times it runs.
  echo 'Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";'
  apt-config dump Acquire | grep -v '^Acquire::IndexTargets'
} > "$apt_dir/apt.conf"
export APT_CONFIG=$apt_dir/apt.conf
apt_options=(
  -o APT::Architecture=arm64 -o APT::Architectures=arm64
  -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
  -o Dir::State::Status="$apt_dir/status"
  -o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts="$apt_dir/empty.d"
  -o Dir::Etc::Preferences="$apt_dir/empty.d/none" -o Dir::Etc::PreferencesParts="$apt_dir/empty.d"
  -o Acquire::Languages=none -o APT::Get::Show-Versions=false -q
)
# As root, apt would hand downloads to the _apt user, who cannot write into a
# private folder under a user's checkout; these files are ours alone.
if [ "$(id -u)" = 0 ]; then apt_options+=(-o APT::Sandbox::User=root); fi

echo "arm64-sysroot: reading the arm64 package lists from $(sed -E 's/^deb (\[[^]]*\] )?([^ ]+).*/\2/' "$apt_dir/sources.list" | sort -u | tr '\n' ' ')"
if ! apt-get "${apt_options[@]}" update > "$apt_dir/update.log" 2>&1 ||
   grep -qE '^(E:|W: Failed to fetch|Err:)' "$apt_dir/update.log"; then
  sed 's/^/  /' "$apt_dir/update.log" | tail -15 >&2
  Fail 2 "apt-get update on the private arm64 state failed: is the Debian mirror reachable (network, proxy)? Full log: $apt_dir/update.log"
fi

# --- The dependency closure ------------------------------------------------
# A simulated install on the empty status file gives the whole Depends
# closure, each package with the version and architecture apt chose.
if ! apt-get "${apt_options[@]}" install -s --no-install-recommends "${kPackages[@]}" > "$apt_dir/resolve.log" 2>&1; then
  sed 's/^/  /' "$apt_dir/resolve.log" | grep -vE '^  (Inst|Conf) ' | tail -15 >&2
  Fail 3 "cannot resolve ${kPackages[*]} for arm64 (a package missing from the mirror?). Full log: $apt_dir/resolve.log"
fi
skip_pattern=" $(printf '%s ' "${kSkipped[@]}")"
resolved=()
while read -r name version arch; do
  case "$skip_pattern" in *" $name "*) continue ;; esac
  resolved+=("$name:$arch=$version")
done < <(awk '/^Inst / {
             v = $3; sub(/^\(/, "", v)
             match($0, /\[[a-z0-9]+\]\)/); a = substr($0, RSTART + 1, RLENGTH - 3)
             print $2, v, a }' "$apt_dir/resolve.log" | sort)
[ "${#resolved[@]}" -gt 0 ] || Fail 3 "apt resolved no packages for ${kPackages[*]}. Full log: $apt_dir/resolve.log"

if [ "$refresh" = 1 ] && [ -f "$stamp" ] && [ "$(head -1 "$stamp")" = "$request" ] &&
   [ "$(tail -n +2 "$stamp")" = "$(printf '%s\n' "${resolved[@]}")" ] && Complete; then
  echo "arm64-sysroot: $dir is up to date with the mirror (${#resolved[@]} packages, $(SysrootSize), $((SECONDS - start)) s)"
  exit 0
fi

# --- Download --------------------------------------------------------------
# The .deb name apt-get download writes: name_version_arch.deb, ':' as %3a.
DebName() {
  local spec=$1 name arch version
  name=${spec%%:*}; arch=${spec#*:}; arch=${arch%%=*}; version=${spec#*=}
  echo "${name}_${version//:/%3a}_${arch}.deb"
}
wanted=()
missing=()
for spec in "${resolved[@]}"; do
  deb=$(DebName "$spec")
  wanted+=("$deb")
  [ -f "$apt_dir/debs/$deb" ] || missing+=("$spec")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "arm64-sysroot: downloading ${#missing[@]} of ${#resolved[@]} packages"
  if ! (cd "$apt_dir/debs" && apt-get "${apt_options[@]}" download "${missing[@]}") > "$apt_dir/download.log" 2>&1; then
    sed 's/^/  /' "$apt_dir/download.log" | tail -15 >&2
    Fail 3 "downloading the arm64 packages failed. Full log: $apt_dir/download.log"
  fi
fi
for deb in "${wanted[@]}"; do
  [ -f "$apt_dir/debs/$deb" ] || Fail 3 "$deb is missing after the download. Log: $apt_dir/download.log"
done
# Versions no longer wanted.
for deb in "$apt_dir"/debs/*.deb; do
  case " ${wanted[*]} " in *" $(basename "$deb") "*) ;; *) rm -f "$deb" ;; esac
done

# --- Unpack ----------------------------------------------------------------
# Always from scratch, so that a file of an older version cannot linger.
rm -f "$stamp"
find "$dir" -mindepth 1 -maxdepth 1 ! -name apt -exec rm -rf {} +
echo "arm64-sysroot: unpacking ${#wanted[@]} packages into $dir"
for deb in "${wanted[@]}"; do
  dpkg-deb -x "$apt_dir/debs/$deb" "$dir" || Fail 3 "dpkg-deb -x $deb failed"
done

# Debian 12 merged /usr: /lib, /bin and /sbin are symlinks into /usr on a real
# system, and packages still ship some files under the old paths.
for top in bin sbin lib; do
  mkdir -p "$dir/usr/$top"
  if [ -d "$dir/$top" ] && [ ! -L "$dir/$top" ]; then
    cp -a "$dir/$top/." "$dir/usr/$top/"
    rm -rf "${dir:?}/$top"
  fi
  [ -e "$dir/$top" ] || ln -s "usr/$top" "$dir/$top"
done

# An absolute symlink (usr/lib/aarch64-linux-gnu/libz.so ->
# /lib/aarch64-linux-gnu/libz.so.1) would name the host's file: the linker
# then misses libz.so and quietly takes libz.a. Point each one inside the
# sysroot, relative, at the merged /usr path.
rewritten=0
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  case "$target" in /lib/*|/bin/*|/sbin/*) target=/usr$target ;; esac
  ln -sfn "$(realpath -ms --relative-to="$(dirname "$link")" "$dir$target")" "$link"
  rewritten=$((rewritten + 1))
done < <(find "$dir" -path "$dir/apt" -prune -o -type l -lname '/*' -print0)

# Documentation is of no use to a linker or to qemu.
rm -rf "$dir/usr/share/doc" "$dir/usr/share/man" "$dir/usr/share/info" "$dir/usr/share/lintian"

for f in "${kRequiredFiles[@]}"; do
  [ -e "$dir/$f" ] || Fail 4 "$dir/$f is missing or a broken link after unpacking"
done
{ echo "$request"; printf '%s\n' "${resolved[@]}"; } > "$stamp"

echo "arm64-sysroot: packages:"
printf '%s\n' "${resolved[@]}" | sed 's/^/  /'
echo "arm64-sysroot: $dir ready: ${#resolved[@]} packages, $rewritten absolute symlinks made relative," \
     "$(SysrootSize) (apt state: $(du -sh "$apt_dir" | cut -f1)), $((SECONDS - start)) s"
