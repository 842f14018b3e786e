# Sourced by the other scripts: the toolchain chosen by setup.sh.
# shellcheck disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/../.tlsproof/toolchain.env"
