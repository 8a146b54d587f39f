#!/usr/bin/env bash
# Builds the container image partner-gateway:<version> with podman from the release archive
# (scripts/release.sh, run first if the archive is missing), offline: FROM scratch, with the
# programs, the shared libraries ldd says they need (glibc and the loader from this Debian
# system, libhiredis from the archive), Debian's CA certificates and a non-root user.
#   scripts/image.sh           build partner-gateway:<version>
#   scripts/image.sh --save    also write it as an OCI archive:
#                              dist/partner-gateway-<version>-image-linux-<arch>.oci.tar
# PG_PODMAN replaces the podman command (with global flags a restricted sandbox may need).
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a podman <<< "${PG_PODMAN:-podman}"
save=false
[ "${1:-}" = "--save" ] && save=true

version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/GatewayContract/Release.swift)
arch=$(uname -m)
name="partner-gateway-$version-linux-$arch"
[ -f "dist/$name.tar.gz" ] || scripts/release.sh
(cd dist && grep " $name.tar.gz\$" SHA256SUMS | sha256sum -c --quiet -)

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
tar -xzf "dist/$name.tar.gz" -C "$context"
release="$context/$name"
rootfs="$context/rootfs"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib" "$rootfs/etc/partner-gateway/keys" "$rootfs/etc/ssl/certs" \
  "$rootfs/usr/share/partner-gateway" "$rootfs/tmp"
chmod 1777 "$rootfs/tmp"
cp "$release/bin/PartnerGateway" "$release/bin/gatewayctl" "$rootfs/usr/local/bin/"
cp -R "$release/bin/"*.resources "$rootfs/usr/local/bin/"
cp "$release/lib/"* "$rootfs/usr/local/lib/" 2>/dev/null || true
# glibc and the dynamic loader, at the paths the programs look for them, each with its
# Debian package's licence.
mkdir -p "$rootfs/usr/share/partner-gateway/licenses"
ldd "$rootfs/usr/local/bin/PartnerGateway" "$rootfs/usr/local/bin/gatewayctl" \
  | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u | while read -r library; do
  case "$library" in "$rootfs"/*) continue ;; esac
  mkdir -p "$rootfs$(dirname "$library")"
  cp -L "$library" "$rootfs$library"
  package=$(dpkg -S "*/$(basename "$library")" 2>/dev/null | head -1 | cut -d: -f1)
  [ -n "$package" ] && cp "/usr/share/doc/$package/copyright" "$rootfs/usr/share/partner-gateway/licenses/$package"
done
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
printf 'root:x:0:0:root:/nonexistent:/usr/sbin/nologin\npartner-gateway:x:65532:65532:Partner Gateway:/nonexistent:/usr/sbin/nologin\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\npartner-gateway:x:65532:\n' > "$rootfs/etc/group"
printf 'hosts: files dns\n' > "$rootfs/etc/nsswitch.conf"
cp "$release/config/gateway.production.yaml" "$rootfs/etc/partner-gateway/gateway.yaml"
cp "$release/LICENSE" "$release/THIRD-PARTY-NOTICES" "$release/BUILD" "$rootfs/usr/share/partner-gateway/"
cp /usr/share/doc/ca-certificates/copyright "$rootfs/usr/share/partner-gateway/licenses/ca-certificates"
cp deploy/container/Containerfile "$context/"

commit=$(sed -n 's/^commit //p' "$release/BUILD")
"${podman[@]}" build --pull=never --network=none --file "$context/Containerfile" --tag "partner-gateway:$version" \
  --label "org.opencontainers.image.title=partner-gateway" --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$commit" --label "org.opencontainers.image.licenses=LicenseRef-Proprietary" \
  "$context" >/dev/null
size=$("${podman[@]}" image inspect --format '{{.Size}}' "partner-gateway:$version")
echo "built partner-gateway:$version ($((size / 1024 / 1024)) MiB)"
if $save; then
  image="partner-gateway-$version-image-linux-$arch.oci.tar"
  rm -f "dist/$image"
  "${podman[@]}" save --quiet --format oci-archive --output "dist/$image" "partner-gateway:$version"
  (cd dist && { grep -v " $image\$" SHA256SUMS || true; sha256sum "$image"; } > SHA256SUMS.next && mv SHA256SUMS.next SHA256SUMS)
  echo "dist/$image ($(du -h "dist/$image" | cut -f1))"
fi
