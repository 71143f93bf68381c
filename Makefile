# The two commands of the README, `make run` and `make test`: both set everything up first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Touched after each install: pip runs again only when pyproject.toml is newer.
INSTALLED := $(VENV)/.installed

.PHONY: install run reset demo-password test lint bench contest-day

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(INSTALLED)

# The site on http://127.0.0.1:8000/ (the Procfile under honcho, see bin/run); Ctrl-C stops it.
run: install
	bin/run

# Wipe the development site's data and seed the demo again, printing a new demo password.
reset: install
	bin/run reset

# Give the development site's demo user a new password and print it; nothing else changes.
demo-password: install
	bin/run demo-password

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The boards it measures are the SQL database's: migrated first, as on a fresh clone.
bench: install
	DEBUG=$${DEBUG:-true} $(BIN)/python manage.py migrate --noinput --verbosity 0
	DEBUG=$${DEBUG:-true} $(BIN)/python manage.py bench

# A contest on the production stack (gunicorn, PostgreSQL, Redis, Celery, MongoDB) under Locust,
# with faults, ending with the verdict line (see loadtest/contest_day.py). CONTEST_DAY_MINUTES and
# CONTEST_DAY_PROGRAMMERS set its length and size.
contest-day: install
	$(BIN)/python -m loadtest.contest_day
