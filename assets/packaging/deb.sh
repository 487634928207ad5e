#!/usr/bin/env bash
# Builds a Debian package of fxray from a built binary, with Debian's own dpkg-deb:
#   assets/packaging/deb.sh target/release/fxray [OUT_DIR]
# writes OUT_DIR/fxray_<version>_<arch>.deb (OUT_DIR defaults to target/debian) holding the
# binary, a desktop entry and icon, the man page and the shell completions (both written by the
# binary itself, so they match it). Prints the package's path.
set -euo pipefail
bin="${1:?usage: deb.sh FXRAY_BINARY [OUT_DIR]}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${2:-$root/target/debian}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
arch="$(dpkg --print-architecture)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"

install -Dm755 "$bin" "$stage/usr/bin/fxray"
install -Dm644 "$here/fxray.desktop" "$stage/usr/share/applications/fxray.desktop"
install -Dm644 "$here/fxray.svg" "$stage/usr/share/icons/hicolor/scalable/apps/fxray.svg"
mkdir -p "$stage/usr/share/man/man1" "$stage/usr/share/bash-completion/completions" \
    "$stage/usr/share/zsh/vendor-completions" "$stage/usr/share/fish/vendor_completions.d"
"$bin" man | gzip -9n >"$stage/usr/share/man/man1/fxray.1.gz"
"$bin" completions bash >"$stage/usr/share/bash-completion/completions/fxray"
"$bin" completions zsh >"$stage/usr/share/zsh/vendor-completions/_fxray"
"$bin" completions fish >"$stage/usr/share/fish/vendor_completions.d/fxray.fish"

size_kib="$(du -sk "$stage/usr" | cut -f1)"
mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<CONTROL
Package: fxray
Version: $version
Architecture: $arch
Maintainer: fxray developers <fxray@invalid>
Installed-Size: $size_kib
Depends: libc6, libgcc-s1
Recommends: openssh-client, libvulkan1 | libgl1, libxkbcommon-x11-0, xdg-desktop-portal
Section: devel
Priority: optional
Description: see inside a torch.compile run
 fxray opens a torch.compile debug tree (TorchAir npugraph_ex, Inductor), draws every
 pass's FX graph folded by module, diffs passes, shows dumped tensors and msprobe
 statistics, plots aclGraph timelines, and works on a server over ssh.
CONTROL
mkdir -p "$out"
deb="$out/fxray_${version}_${arch}.deb"
# FXRAY_DEB_COMPRESSION=none for a quick local package (tests); xz, dpkg's default, otherwise.
dpkg-deb --root-owner-group -Z"${FXRAY_DEB_COMPRESSION:-xz}" --build "$stage" "$deb" >/dev/null
echo "$deb"
