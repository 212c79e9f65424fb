#!/usr/bin/env bash
# What the tests need beyond Node, as Debian packages: prints the missing ones, one line, space
# separated (nothing when all are there). Used by scripts/test.sh (npm test) and .ci/run.
need=()
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
# The web app's end-to-end tests drive Debian's chromium (playwright-core downloads no browser).
command -v chromium >/dev/null 2>&1 || need+=(chromium fonts-liberation)
command -v jq >/dev/null 2>&1 || need+=(jq)
command -v curl >/dev/null 2>&1 || need+=(curl)
# Exports are read back by the programs that really read them: LibreOffice (XLSX, CSV) and docutils,
# the reStructuredText parser of Sphinx (Sphinx-Needs descriptions), under Debian's python3.
command -v soffice >/dev/null 2>&1 || need+=(libreoffice-calc-nogui)
/usr/bin/python3 -c 'import docutils' >/dev/null 2>&1 || need+=(python3-docutils)
# Exports are edited by a Python script with openpyxl, and workbooks written by it imported.
/usr/bin/python3 -c 'import openpyxl' >/dev/null 2>&1 || need+=(python3-openpyxl)
# Baseline documents: the DOCX is read by python-docx and converted to PDF by LibreOffice Writer.
/usr/bin/python3 -c 'import docx' >/dev/null 2>&1 || need+=(python3-docx)
[ -e /usr/lib/libreoffice/share/registry/writer.xcd ] || need+=(libreoffice-writer-nogui)
# ReqIF exports are read back by StrictDoc's reqif library (vendored in packages/exchange/test/vendor).
/usr/bin/python3 -c 'import lxml.etree, lxml.html' >/dev/null 2>&1 || need+=(python3-lxml)
# needs.json exports are loaded by Sphinx-Needs (vendored in packages/exchange/test/vendor/sphinx-needs)
# under Debian's Sphinx, with the libraries Sphinx-Needs imports that Debian has.
/usr/bin/python3 -c 'import sphinx' >/dev/null 2>&1 || need+=(python3-sphinx)
/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1 || need+=(python3-jsonschema)
/usr/bin/python3 -c 'import requests_file' >/dev/null 2>&1 || need+=(python3-requests-file)
# The web app's printed documents (PDF through chromium) are read back by poppler's pdftotext.
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
# GNU time measures the peak memory of the commands the benchmarks and memory tests time.
[ -x /usr/bin/time ] || need+=(time)
echo "${need[*]}"
