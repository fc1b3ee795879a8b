#!/usr/bin/env bash
# Installs the Debian packages the platform and its tests need (Chromium, Tesseract, poppler)
# when they are missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
# OCR of scanned pages and images (Tesseract with English and Persian), and poppler's
# pdftoppm, which renders a scanned PDF page for it.
command -v tesseract >/dev/null || missing+=(tesseract-ocr)
[ -e /usr/share/tesseract-ocr/5/tessdata/eng.traineddata ] || missing+=(tesseract-ocr-eng)
[ -e /usr/share/tesseract-ocr/5/tessdata/fas.traineddata ] || missing+=(tesseract-ocr-fas)
command -v pdftoppm >/dev/null || missing+=(poppler-utils)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
