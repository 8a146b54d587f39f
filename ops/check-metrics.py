#!/usr/bin/env python3
"""Checks a gateway's /metrics text against the dashboard and the alert rules.

    ops/check-metrics.py METRICS_FILE [ops/grafana-dashboard.json] [ops/prometheus-alerts.yaml]

Parses the exposition with prometheus_client's parser (the format Prometheus scrapes), then
fails (exit 1) when a family has no HELP text, or when a metric that a dashboard panel or an
alert rule names is not exported. Prints one JSON object: families, missing names, problems.
"""
import json
import re
import sys

import yaml
from prometheus_client.parser import text_string_to_metric_families

METRIC_NAME = re.compile(r"\b((?:gateway|process)_[a-z0-9_]+)")
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def named_in(expressions):
    names = set()
    for expression in expressions:
        for name in METRIC_NAME.findall(expression):
            for suffix in HISTOGRAM_SUFFIXES:
                if name.endswith(suffix):
                    name = name[: -len(suffix)]
            names.add(name)
    return names


def dashboard_expressions(path):
    dashboard = json.load(open(path))
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    expressions += [variable.get("definition", "") for variable in dashboard.get("templating", {}).get("list", [])]
    return expressions


def rule_expressions(path):
    rules = yaml.safe_load(open(path))
    return [rule["expr"] for group in rules["groups"] for rule in group["rules"]]


def main():
    text = open(sys.argv[1]).read()
    dashboard = sys.argv[2] if len(sys.argv) > 2 else "ops/grafana-dashboard.json"
    alerts = sys.argv[3] if len(sys.argv) > 3 else "ops/prometheus-alerts.yaml"

    families = {}
    for family in text_string_to_metric_families(text):
        families[family.name] = {"type": family.type, "help": family.documentation, "samples": len(family.samples)}
    # prometheus_client drops a counter's _total suffix from the family name.
    exported = set(families) | {name + "_total" for name, family in families.items() if family["type"] == "counter"}

    problems = [f"{name} has no HELP text" for name, family in sorted(families.items()) if not family["help"]]
    problems += [f"{name} has no TYPE" for name, family in sorted(families.items()) if family["type"] == "unknown"]
    wanted = named_in(dashboard_expressions(dashboard)) | named_in(rule_expressions(alerts))
    missing = sorted(name for name in wanted if name not in exported)
    problems += [f"{name} is named by the dashboard or an alert rule but not exported" for name in missing]

    print(json.dumps({"families": families, "named": sorted(wanted), "missing": missing, "problems": problems}, indent=1))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
