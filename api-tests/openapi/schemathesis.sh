#!/usr/bin/env bash
# schemathesis against every listener of a running gateway (started by scripts/api-checks.sh,
# which exports API_PUBLIC_URL, API_ADMIN_URL, API_AUTHZ_URL, API_ADMIN_TOKEN, API_KEY,
# API_ACCESS_TOKEN, API_VERIFIER_TOKEN).
#   api-tests/openapi/schemathesis.sh SCHEMATHESIS_BIN REPORT_DIR
# Seeded and bounded: the same seed gives the same requests; about a minute on 2 cores.
# One worker: with two, CPython 3.11 sometimes fails inside hypothesis with "AST constructor
# recursion depth mismatch" (concurrent ast parsing), an error of the tool, not the gateway.
set -uo pipefail
cd "$(dirname "$0")/../.."
st=$1
reports=$2
seed=${API_CHECKS_SEED:-20261122}
examples=${API_CHECKS_MAX_EXAMPLES:-100}
checks=${API_CHECKS_ST_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance,ignored_auth}

status=0
for listener in public admin authz; do
  case $listener in public) url=$API_PUBLIC_URL ;; admin) url=$API_ADMIN_URL ;; authz) url=$API_AUTHZ_URL ;; esac
  echo "--- schemathesis: $listener listener ($url), seed $seed, max examples $examples"
  "$st" --config-file api-tests/openapi/schemathesis.toml --no-color run docs/openapi.yaml \
    --url "$url" --include-tag "$listener" \
    --checks "$checks" \
    --phases examples,coverage,fuzzing \
    --max-examples "$examples" --seed "$seed" --generation-database none \
    --workers 1 --request-timeout 10 \
    --report junit --report-junit-path "$reports/schemathesis-$listener.xml" \
    --output-truncate true \
    || status=1
done
exit $status
