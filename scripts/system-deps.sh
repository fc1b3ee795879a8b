#!/usr/bin/env bash
# Installs the Debian packages that are missing, in one apt-get call.
#   scripts/system-deps.sh platform   what the platform itself needs: Tesseract and poppler for
#                                     OCR, and the OpenLDAP and SASL headers python-ldap builds
#                                     against (pip builds it from source; `make install` runs this
#                                     first, so `make serve` works on a fresh machine)
#   scripts/system-deps.sh            all of that, and what the tests and benchmarks start:
#                                     Chromium, OpenLDAP's slapd, Node and npm, the Python
#                                     documentation a benchmark crawls, Samba's smbd and Dovecot
#                                     (the SMB share and IMAP mailbox the source tests start), nginx
#                                     (the deployment test and benchmark run the guide's
#                                     configuration in it); then the npm package of the
#                                     OpenID provider the identity tests start, into
#                                     tests/identity/oidc_provider/node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
scope="${1:-all}"
missing=()
# OCR of scanned pages and images (Tesseract with English and Persian), and poppler's
# pdftoppm, which renders a scanned PDF page for it.
command -v tesseract >/dev/null || missing+=(tesseract-ocr)
[ -e /usr/share/tesseract-ocr/5/tessdata/eng.traineddata ] || missing+=(tesseract-ocr-eng)
[ -e /usr/share/tesseract-ocr/5/tessdata/fas.traineddata ] || missing+=(tesseract-ocr-fas)
command -v pdftoppm >/dev/null || missing+=(poppler-utils)
[ -e /usr/include/ldap.h ] || missing+=(libldap2-dev)
[ -e /usr/include/sasl/sasl.h ] || missing+=(libsasl2-dev)
if [ "$scope" = all ]; then
    command -v chromium >/dev/null || missing+=(chromium)
    command -v chromedriver >/dev/null || missing+=(chromium-driver)
    [ -x /usr/sbin/slapd ] || missing+=(slapd)
    command -v ldapsearch >/dev/null || missing+=(ldap-utils)
    command -v node >/dev/null || missing+=(nodejs)
    command -v npm >/dev/null || missing+=(npm)
    # benchmarks/source_sync.py crawls the Python documentation served locally.
    [ -f /usr/share/doc/python3.11/html/index.html ] || missing+=(python3.11-doc)
    # tests/sources start their own smbd and Dovecot (configs in a temp dir, loopback ports).
    [ -x /usr/sbin/smbd ] || missing+=(samba)
    [ -x /usr/sbin/dovecot ] || missing+=(dovecot-imapd)
    # tests/ragplatform/test_deployment.py and benchmarks/deployment.py start their own nginx
    # (a prefix in a temp dir, loopback ports) with the guide's configuration; the system
    # service the package may start on port 80 is not used.
    [ -x /usr/sbin/nginx ] || missing+=(nginx)
fi
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
provider=tests/identity/oidc_provider
if [ "$scope" = all ] && [ ! -d "$provider/node_modules/oidc-provider" ]; then
    npm install --prefix "$provider" --no-audit --no-fund --silent
fi
