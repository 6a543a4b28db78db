// A QR code drawn locally as SVG from uqr's module matrix: the otpauth URI (it carries the TOTP secret) never leaves
// the page, and no image service is needed.
import { encode } from 'uqr';

export function QrCode({ text, label, size = 200 }: { text: string; label: string; size?: number }) {
  const qr = encode(text, { ecc: 'M', border: 2 });
  const n = qr.data.length;
  let d = '';
  qr.data.forEach((row, y) => row.forEach((on, x) => { if (on) d += `M${x} ${y}h1v1h-1z`; }));
  return (
    <svg class="qr" role="img" aria-label={label} width={size} height={size} viewBox={`0 0 ${n} ${n}`} shape-rendering="crispEdges">
      <rect width={n} height={n} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
