#!/usr/bin/env bash
# Installs the Debian packages the platform, its tests and benchmarks need when they are missing
# (Chromium; Tesseract and poppler for OCR; OpenLDAP's slapd and the headers python-ldap builds
# against; Node; the Python documentation a benchmark crawls), then the npm package of the OpenID provider the identity tests start, into
# tests/identity/oidc_provider/node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
# OCR of scanned pages and images (Tesseract with English and Persian), and poppler's
# pdftoppm, which renders a scanned PDF page for it.
command -v tesseract >/dev/null || missing+=(tesseract-ocr)
[ -e /usr/share/tesseract-ocr/5/tessdata/eng.traineddata ] || missing+=(tesseract-ocr-eng)
[ -e /usr/share/tesseract-ocr/5/tessdata/fas.traineddata ] || missing+=(tesseract-ocr-fas)
command -v pdftoppm >/dev/null || missing+=(poppler-utils)
[ -x /usr/sbin/slapd ] || missing+=(slapd)
command -v ldapsearch >/dev/null || missing+=(ldap-utils)
[ -e /usr/include/ldap.h ] || missing+=(libldap2-dev)
[ -e /usr/include/sasl/sasl.h ] || missing+=(libsasl2-dev)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
# benchmarks/source_sync.py crawls the Python documentation served locally.
[ -f /usr/share/doc/python3.11/html/index.html ] || missing+=(python3.11-doc)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
provider=tests/identity/oidc_provider
if [ ! -d "$provider/node_modules/oidc-provider" ]; then
    npm install --prefix "$provider" --no-audit --no-fund --silent
fi
