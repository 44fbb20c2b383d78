# schedboard: one image for the web server, the Celery worker and Celery beat.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, pinned (scripts/lock writes requirements.lock): this layer is rebuilt
# only when they change, not on every code change.
COPY requirements.lock ./
RUN pip install -r requirements.lock

# Then the app itself (.dockerignore keeps the virtualenv, var/, tests and the rest out).
COPY pyproject.toml manage.py ./
COPY config ./config
COPY policy ./policy
COPY scoring ./scoring
COPY templates ./templates
COPY static ./static

# Editable, so `config` and `policy` are imported from /app next to templates/ and static/.
RUN pip install --no-deps -e . \
    && DEBUG=true python manage.py collectstatic --noinput \
    && useradd --system --uid 10001 --home-dir /app schedboard \
    && mkdir -p var && chown schedboard var

USER schedboard
EXPOSE 8000

CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
