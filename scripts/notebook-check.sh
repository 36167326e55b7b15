#!/usr/bin/env bash
# Executes examples/notebook.ipynb headless, with the tslab kernel, and fails
# if any cell fails or if an output differs from the one committed with the
# notebook (scripts/notebook-compare.mjs says which cell and how; the demo
# site's port and other counts that change from run to run are masked).
# `npm run notebook:check` runs it; CI runs it too (.ci/run).
#
#   npm run notebook:check               # run and compare
#   npm run notebook:check -- --update   # run, and write the fresh outputs into the notebook
#
# Needs Jupyter's nbconvert and IPython (Debian: apt-get install -y python3-notebook python3-ipython
# python3-nbconvert jupyter-nbconvert) and npm access for tslab (scripts/tslab.sh).
# The notebook runs as a user's project would run it: in a temporary folder
# whose node_modules/coroutine-crawler is this package (built), so its imports
# are `coroutine-crawler/…`. The kernel spec is installed into that folder
# too, not into your Jupyter set-up.
set -euo pipefail

cd "$(dirname "$0")/.."
root="$PWD"

update=false
case "${1-}" in
  "") ;;
  --update) update=true ;;
  *) echo "notebook:check: unknown argument $1 (expected nothing or --update)" >&2; exit 2 ;;
esac

if ! jupyter nbconvert --version >/dev/null 2>&1; then
  echo "notebook:check needs jupyter nbconvert:" >&2
  echo "  apt-get install -y python3-notebook python3-nbconvert python3-ipython jupyter-nbconvert" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The notebook imports the built package (dist/, through package.json's exports), as a user of the package would.
npm run --silent build

# tslab installs its kernel spec with the Python that has Jupyter (not, say, a pyenv shim's).
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import jupyter_client" >/dev/null 2>&1; then
    python="$candidate"
    break
  fi
done
if [ -z "$python" ]; then
  echo "notebook:check: no python3 with jupyter_client found" >&2
  exit 1
fi

# Install the kernel spec where only this run looks for it.
bash scripts/tslab.sh install --python="$python" --binary="$root/scripts/tslab.sh" --prefix="$work/jupyter" >/dev/null
export JUPYTER_PATH="$work/jupyter/share/jupyter"

# A project of a user: the notebook, the package as its dependency, and Node's types (@types/node,
# which a TypeScript project has; tslab type-checks each cell, and its own copy is not found under npx).
mkdir -p "$work/project/node_modules"
ln -s "$root" "$work/project/node_modules/coroutine-crawler"
ln -s "$root/node_modules/@types" "$work/project/node_modules/@types"
cp examples/notebook.ipynb "$work/project/notebook.ipynb"

# record_timing=False: no execution timestamps in the cells' metadata, so an
# updated notebook differs from the committed one only where an output does.
(cd "$work/project" && jupyter nbconvert --to notebook --execute \
  --ExecutePreprocessor.kernel_name=tslab \
  --ExecutePreprocessor.timeout=120 \
  --ExecutePreprocessor.record_timing=False \
  --output executed.ipynb \
  notebook.ipynb)

if $update; then
  node scripts/notebook-compare.mjs --write examples/notebook.ipynb "$work/project/executed.ipynb"
  echo "notebook:check: every cell ran; examples/notebook.ipynb now holds the fresh outputs"
else
  node scripts/notebook-compare.mjs examples/notebook.ipynb "$work/project/executed.ipynb"
  echo "notebook:check: every cell of examples/notebook.ipynb ran, and printed what the notebook shows"
fi
