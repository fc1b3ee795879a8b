#!/usr/bin/env bash
# Fetches the documents of the real-documents dev set (benchmarks/data/real_docs/) from Debian 12
# documentation packages and copies them, under stable names, into a folder outside git.
#
#   sudo scripts/real-docs.sh [TARGET]      # TARGET defaults to .data/real-docs (git-ignored)
#
# Idempotent: packages already installed are not installed again, files are copied again
# (same bytes), and the PDFs rendered with Chromium are only rendered when missing (set
# FORCE_PDF=1 to render them again; Chromium stamps the creation time into each PDF).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${1:-$repo_root/.data/real-docs}"

packages=(
    debian-reference-en # Debian Reference, HTML chapters
    apt-doc             # APT user guide and offline guide
    sudo                # sudo's Markdown notes and manual pages
    lua5.1-doc          # Lua 5.1 reference manual (HTML)
    rsync               # rsync(1), rsyncd.conf(5)
    logrotate           # logrotate(8)
    cron                # crontab(5)
    openssh-client      # ssh_config(5)
    nftables            # nft(8)
    man-db              # renders the manual pages
    chromium            # renders three HTML chapters to PDF
)

if [ "$(id -u)" -ne 0 ]; then
    echo "real-docs.sh: run as root (it installs Debian packages)" >&2
    exit 1
fi

missing=()
for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    # Update the package lists once, only when an install needs it.
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null
    fi
fi

mkdir -p "$target"
written=()

copy() { # SOURCE NAME: copy a file as it is
    install -m 0644 "$1" "$target/$2"
    written+=("$2")
}

gunzip_to() { # SOURCE.gz NAME
    zcat -f "$1" >"$target/$2.tmp"
    mv "$target/$2.tmp" "$target/$2"
    chmod 0644 "$target/$2"
    written+=("$2")
}

man_to_text() { # SECTION PAGE NAME: the manual page as plain text, 80 columns, no hyphenation
    LC_ALL=C.UTF-8 MANWIDTH=80 MAN_KEEP_FORMATTING='' man --nh --nj -P cat "$1" "$2" \
        2>/dev/null | col -b >"$target/$3.tmp"
    mv "$target/$3.tmp" "$target/$3"
    chmod 0644 "$target/$3"
    written+=("$3")
}

html_to_pdf() { # SOURCE.html NAME.pdf: printed by headless Chromium, no header or footer
    if [ -s "$target/$2" ] && [ "${FORCE_PDF:-0}" != 1 ]; then
        written+=("$2")
        return
    fi
    local profile
    profile="$(mktemp -d)"
    nice chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer \
        --user-data-dir="$profile" --print-to-pdf="$target/$2.tmp" "file://$1" >/dev/null 2>&1
    rm -rf "$profile"
    mv "$target/$2.tmp" "$target/$2"
    chmod 0644 "$target/$2"
    written+=("$2")
}

ref=/usr/share/debian-reference
# PDF: three chapters of the Debian Reference, printed from its HTML.
html_to_pdf "$ref/ch03.en.html" debian-reference-system-initialization.pdf
html_to_pdf "$ref/ch04.en.html" debian-reference-authentication.pdf
html_to_pdf "$ref/ch10.en.html" debian-reference-data-management.pdf
# HTML
copy "$ref/ch05.en.html" debian-reference-network-setup.html
copy "$ref/ch08.en.html" debian-reference-i18n-l10n.html
copy /usr/share/doc/apt-doc/guide.html/ch4.html apt-user-guide-interface.html
copy /usr/share/doc/lua5.1-doc/doc/manual.html lua-5.1-reference-manual.html
# Markdown
gunzip_to /usr/share/doc/sudo/TROUBLESHOOTING.md.gz sudo-troubleshooting.md
gunzip_to /usr/share/doc/sudo/UPGRADE.md.gz sudo-upgrade-notes.md
gunzip_to /usr/share/doc/apt/acquire-additional-files.md.gz apt-acquire-additional-files.md
gunzip_to /usr/share/doc/apt/json-hooks-protocol.md.gz apt-json-hooks-protocol.md
# Plain text
gunzip_to /usr/share/doc/apt-doc/offline.text.gz apt-offline-guide.txt
man_to_text 1 rsync rsync-manual.txt
man_to_text 5 rsyncd.conf rsyncd-conf-manual.txt
man_to_text 8 logrotate logrotate-manual.txt
man_to_text 5 crontab crontab-format-manual.txt
man_to_text 5 ssh_config ssh-config-manual.txt
man_to_text 8 nft nft-manual.txt

echo "real-docs.sh: wrote ${#written[@]} files to $target"
for name in "${written[@]}"; do
    printf '  %-45s %9s bytes\n' "$name" "$(stat -c %s "$target/$name")"
done
echo "from packages:"
for pkg in "${packages[@]}"; do
    printf '  %s\n' "$(dpkg-query -W -f='${Package} ${Version}' "$pkg")"
done
