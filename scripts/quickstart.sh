#!/usr/bin/env bash
# Placeholder replaced when `sim serve` lands.
echo "quickstart: not yet available" >&2; exit 1
