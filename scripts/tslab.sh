#!/usr/bin/env bash
# Starts tslab, the TypeScript kernel for Jupyter, through npx, pinned to one
# version. The kernel spec that scripts/notebook-check.sh installs points here,
# so tslab needs no global install and no entry in package.json.
exec npx --yes tslab@1.0.22 "$@"
