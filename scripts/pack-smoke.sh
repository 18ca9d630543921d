#!/usr/bin/env bash
# Pack the clone as npm would publish it, install the tarball into an empty prefix, and run what a user
# runs first from there: --help, completion, and the emulator serving a shipped environment by name.
# Dependencies come from the npm cache when it has them (after `npm ci`); nothing runs from the clone.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build >/dev/null
work=$(mktemp -d)
trap 'kill "${emu_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
tarball=$(npm pack --silent --pack-destination "$work" | tail -n 1)
npm install --global --prefix "$work/prefix" --prefer-offline --no-audit --no-fund "$work/$tarball" >/dev/null
bin="$work/prefix/bin/dds-migrate"
cd "$work"   # away from the clone: the installed package must find its own files
"$bin" --help | head -n 3
"$bin" completion | grep -q 'get-yargs-completions' && echo "completion: ok"
"$bin" emulator --data prod --port 0 >"$work/emu.out" 2>&1 &
emu_pid=$!
for _ in $(seq 1 50); do grep -q 'listening' "$work/emu.out" && break; sleep 0.1; done
grep -m1 'listening' "$work/emu.out" || { cat "$work/emu.out"; exit 1; }
grep -m1 'Serving' "$work/emu.out" || true
echo "pack smoke: ok ($tarball)"
