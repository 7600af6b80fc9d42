# DocMind: `make run` serves the app, `make test` runs the test suite.
# Both create .venv/ with Python 3.12 on first use (see scripts/find-python).
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint install clean-data

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $$(scripts/find-python) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

run: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py bootstrap
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) docmind.asgi:application

test: $(VENV)/.installed
	$(PY) -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
