#!/usr/bin/env bash
# Executes examples/notebook.ipynb headless, as a user of the package sets it up, and fails if any cell
# fails or if an output differs from the one committed with the notebook (scripts/notebook-compare.mjs
# says which cell and how; the demo site's port and other counts that change from run to run are masked).
# `npm run notebook:check` runs it; CI runs it too (.ci/run).
#
#   npm run notebook:check               # run and compare
#   npm run notebook:check -- --update   # run, and write the fresh outputs into the notebook
#
# Needs Jupyter's nbconvert and IPython (Debian: apt-get install -y python3-notebook python3-ipython
# python3-nbconvert jupyter-nbconvert) and the npm registry (or a warm npm cache).
#
# The user's way, with nothing of this repository but the package: `npm pack` makes the tarball, and in
# a new project in a temporary folder (outside the repository, so nothing resolves through its
# node_modules) the script runs the set-up lines of the README's "Notebook" section, the fenced block
# after the mark `<!-- scripts/notebook-check.sh runs these lines -->`, as written, with three changes:
# `npm install coroutine-crawler` installs the tarball instead of the registry's version, `tslab install`
# gets `--prefix` (the kernel spec goes into the temporary folder, not into your Jupyter set-up) and the
# Python that has Jupyter, and `jupyter notebook` (interactive) becomes `jupyter nbconvert --execute`.
# So the kernel is tslab from the project's node_modules/.bin, and the notebook the copy the package ships.
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

# tslab installs its kernel spec with the Python that has Jupyter (not, say, a pyenv shim's).
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import jupyter_client" >/dev/null 2>&1; then
    python="$(command -v "$candidate")"
    break
  fi
done
if [ -z "$python" ]; then
  echo "notebook:check: no python3 with jupyter_client found" >&2
  exit 1
fi

# The README's set-up lines, as written.
setup="$(awk '/<!-- scripts\/notebook-check.sh runs these lines -->/ { marked = 1; next }
  marked && /^```/ { if (inside) exit; inside = 1; next }
  inside { print }' README.md)"
if [ -z "$setup" ]; then
  echo "notebook:check: README.md has no block after <!-- scripts/notebook-check.sh runs these lines -->" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The package as the registry would serve it. `npm pack` would build in `prepack`; build first and pack
# with --ignore-scripts, so that a failed build stops here with its own message.
npm run --silent build
tarball="$work/$(npm pack --ignore-scripts --silent --pack-destination "$work" | tail -n 1)"

mkdir "$work/project"
cd "$work/project"
npm init -y >/dev/null
# The replacements, in single quotes: the README's line runs through eval, which expands them.
tarball_argument=' "$tarball" '
prefix_argument=' --prefix="$work/jupyter"'
python_argument='--python="$python"'
ran=0
while IFS= read -r line; do
  command="${line%%#*}"                       # a comment after the command is the README's, for the reader
  command="${command%"${command##*[![:space:]]}"}"
  case "$command" in
    "") continue ;;
    "npm install "*)
      [[ "$command" == *" coroutine-crawler "* ]] || { echo "notebook:check: the README's npm install names no coroutine-crawler: $line" >&2; exit 1; }
      command="${command/ coroutine-crawler /$tarball_argument} --no-audit --no-fund" ;;
    *"tslab install"*)
      command="${command/--python=python3/$python_argument}$prefix_argument" ;;
    "jupyter notebook "*)
      # record_timing=False: no execution timestamps in the cells' metadata, so an updated notebook
      # differs from the committed one only where an output does.
      notebook="${command#jupyter notebook }"
      command="JUPYTER_PATH=\"\$work/jupyter/share/jupyter\" jupyter nbconvert --to notebook --execute"
      command+=" --ExecutePreprocessor.kernel_name=tslab --ExecutePreprocessor.timeout=120"
      command+=" --ExecutePreprocessor.record_timing=False --output executed.ipynb $notebook" ;;
  esac
  echo "notebook:check: the README's $line"
  eval "$command" >/dev/null </dev/null
  ran=$((ran + 1))
done <<<"$setup"

if [ ! -f executed.ipynb ]; then
  echo "notebook:check: the README's set-up ran $ran lines, and none was 'jupyter notebook NOTEBOOK'" >&2
  exit 1
fi

cd "$root"
if $update; then
  node scripts/notebook-compare.mjs --write examples/notebook.ipynb "$work/project/executed.ipynb"
  echo "notebook:check: every cell ran; examples/notebook.ipynb now holds the fresh outputs"
else
  node scripts/notebook-compare.mjs examples/notebook.ipynb "$work/project/executed.ipynb"
  echo "notebook:check: every cell of the notebook the package ships ran, set up as the README says, and printed what examples/notebook.ipynb shows"
fi
