#!/usr/bin/env bash
# Runs a command as on a fresh machine of this project's kind (Swift 6.3 on Debian 12, nothing installed by
# hand): in a private mount namespace where every installed -dev package that the machine image lacks is
# hidden (its header folders emptied, its headers, libraries and pkg-config files replaced by /dev/null).
# The image's -dev packages are listed in .ci/image-dev-packages.txt. .ci/run builds the product and its tests
# this way before anything else, so a new build dependency fails CI instead of a newcomer.
#   tools/fresh-machine.sh swift build --build-tests
# Needs root and unshare (util-linux); without them it says so and fails (nothing would be hidden).
set -euo pipefail
cd "$(dirname "$0")/.."
image=$(grep -v '^#' .ci/image-dev-packages.txt | sort -u)
if (($(id -u) != 0)) || ! command -v unshare >/dev/null; then
    echo "fresh-machine: needs root and unshare to hide packages" >&2
    exit 2
fi
dirs=() files=()
for pkg in $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | grep -- '-dev$' \
    | sort -u | comm -23 - <(echo "$image")); do
    while IFS= read -r f; do
        if [[ $f =~ ^/usr/include/[^/]+$ && -d $f ]]; then
            dirs+=("$f")
        elif [[ $f =~ \.(h|so|a|pc)$ && (-e $f || -L $f) && ! -d $f ]]; then
            files+=("$f")
        fi
    done < <(dpkg -L "$pkg")
    echo "fresh-machine: hiding $pkg" >&2
done
# Files first: a folder emptied by its tmpfs no longer has them to bind over.
hides=()
for f in "${files[@]}"; do hides+=("mount --bind /dev/null '$f'"); done
for d in "${dirs[@]}"; do hides+=("mount -t tmpfs none '$d'"); done
script=""
for h in "${hides[@]}"; do script+="$h || exit 3; "; done
exec unshare -m bash -c "${script}exec \"\$@\"" fresh-machine "$@"
