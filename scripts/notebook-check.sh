#!/usr/bin/env bash
# Executes examples/notebook.ipynb headless, with the tslab kernel, and fails
# if any cell fails. `npm run notebook:check` runs it.
#
# Needs Jupyter's nbconvert (Debian: apt-get install -y python3-notebook
# python3-nbconvert jupyter-nbconvert) and npm access for tslab. The kernel
# spec is installed into a temporary directory, not into your Jupyter set-up,
# and the executed notebook is written there too: the file in the repository
# stays as it is.
set -euo pipefail

cd "$(dirname "$0")/.."
root="$PWD"

if ! jupyter nbconvert --version >/dev/null 2>&1; then
  echo "notebook:check needs jupyter nbconvert:" >&2
  echo "  apt-get install -y python3-notebook python3-nbconvert jupyter-nbconvert" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The notebook imports the built package (dist/), as a user of the package would.
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

jupyter nbconvert --to notebook --execute \
  --ExecutePreprocessor.kernel_name=tslab \
  --ExecutePreprocessor.timeout=120 \
  --output-dir "$work" \
  examples/notebook.ipynb

echo "notebook:check: every cell of examples/notebook.ipynb ran"
