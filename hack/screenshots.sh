#!/usr/bin/env bash
# Renders the dashboard on the demo scenario (tui.RenderFrame, as the golden tests do), and the
# replay of a recording of it, and turns the frames into screenshots/*.png: ANSI text -> SVG
# (freeze v0.2.2; its own PNG output crashes here) -> PNG (rsvg-convert from Debian's librsvg2-bin).
#
# freeze runs as `go run pkg@version`, outside this module: as a `go tool` of this module it would
# be built against our newer charmbracelet/x/ansi, which its cellbuf dependency does not compile with.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FREEZE=("$GO" run github.com/charmbracelet/freeze@v0.2.2)

if ! command -v rsvg-convert >/dev/null; then
	echo "installing librsvg2-bin for rsvg-convert" >&2
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get install -y librsvg2-bin >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y librsvg2-bin >/dev/null; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The replay view replays a recording of the live demo (its story's first 3 minutes, at 50x). Its
# batches come on the wall clock, so that frame's ages may move by a second between runs.
"$GO" run . record -o "$work/rec" --demo --speed 50 --for 180s 2>/dev/null
"$GO" run ./hack/screenshots -out "$work" -recording "$work/rec"

mkdir -p screenshots
for f in "$work"/*.ansi; do
	name=$(basename "$f" .ansi)
	(cd "$work" && "${FREEZE[@]}" --language ansi --window --padding 20 --margin 0 \
		--font.family "DejaVu Sans Mono" --font.size 14 --line-height 1.2 --background "#171717" -o "$name.svg" "$name.ansi")
	rsvg-convert --background-color "#171717" -o "screenshots/$name.png" "$work/$name.svg"
	echo "screenshots/$name.png"
done
