// A hand-written SVG: requests/s per scenario for each side, on a log scale (the peer is orders of
// magnitude below the others, which a linear axis would flatten to nothing).

const COLORS = { ceiling: '#9aa0a6', service: '#1a73e8', postgres: '#8e24aa', peer: '#e8710a' };
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const short = (n) => (n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k` : n >= 10 ? n.toFixed(0) : n.toFixed(1));

export function chartSvg(scenarios, best) {
  const sides = Object.keys(COLORS).filter((side) => scenarios.some((s) => best[s.id]?.[side]));
  const shown = scenarios.filter((s) => best[s.id]);
  const left = 250,
    width = 560,
    bar = 14,
    gap = 3,
    groupGap = 16,
    top = 50;
  const groupHeight = sides.length * (bar + gap) + groupGap;
  const height = top + shown.length * groupHeight + 40;
  const max = Math.max(10, ...shown.flatMap((s) => sides.map((side) => best[s.id][side]?.rps ?? 0)));
  const decades = Math.ceil(Math.log10(max));
  const x = (v) => left + (Math.log10(Math.max(1, v)) / decades) * width;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${left + width + 80}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="15" font-weight="bold">Requests per second by scenario (log scale)</text>`,
  ];
  sides.forEach((side, i) => {
    parts.push(`<rect x="${left + i * 110}" y="30" width="12" height="12" fill="${COLORS[side]}"/><text x="${left + i * 110 + 16}" y="40">${side}</text>`);
  });
  for (let d = 0; d <= decades; d++) {
    const gx = x(10 ** d);
    parts.push(
      `<line x1="${gx}" y1="${top - 4}" x2="${gx}" y2="${height - 30}" stroke="#e0e0e0"/><text x="${gx}" y="${height - 14}" text-anchor="middle" fill="#555">${short(10 ** d)}</text>`,
    );
  }
  shown.forEach((s, gi) => {
    const gy = top + gi * groupHeight;
    parts.push(`<text x="${left - 8}" y="${gy + (sides.length * (bar + gap)) / 2 + 4}" text-anchor="end">${esc(s.title)}</text>`);
    sides.forEach((side, i) => {
      const m = best[s.id][side];
      if (!m) return;
      const y = gy + i * (bar + gap);
      const w = Math.max(1, x(m.rps) - left);
      parts.push(
        `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${bar}" fill="${COLORS[side]}"><title>${esc(`${side}: ${m.rps.toFixed(0)} req/s`)}</title></rect>`,
      );
      parts.push(`<text x="${(left + w + 4).toFixed(1)}" y="${y + bar - 3}" fill="#333">${short(m.rps)}</text>`);
    });
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
