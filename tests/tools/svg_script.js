// Runs the script of a nusku flame graph (export --format svg) against a
// small stand-in for the DOM, to check what a click and a search do
// without a browser:  node svg_script.js FILE.svg FRAME REGEX
// Clicks the widest frame called FRAME and prints "zoom OK" when it then
// fills the width, its callers too and its callees scale with it; then
// searches REGEX and prints the "Matched: P%" the script shows.
'use strict';
const fs = require('fs');
const [file, frameName, regex] = process.argv.slice(2);
const svg = fs.readFileSync(file, 'utf8');

function el(attrs) {
  return {
    attrs: Object.assign({}, attrs), style: {}, textContent: attrs.text || '',
    handlers: {}, kids: {},
    getAttribute(k) { return this.attrs[k] === undefined ? null : this.attrs[k]; },
    setAttribute(k, v) { this.attrs[k] = String(v); },
    addEventListener(ev, fn) { this.handlers[ev] = fn; },
    querySelector(sel) { return this.kids[sel]; },
  };
}
function attrsOf(s) {
  const a = {};
  s.replace(/([\w-]+)="([^"]*)"/g, (_, k, v) => { a[k] = v; });
  return a;
}
const unxml = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>')
  .replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
const frames = [];
const re = /<g class="f"[^>]*><title>([\s\S]*?)<\/title><rect ([^>]*)\/><text ([^>]*)>[\s\S]*?<\/text><\/g>/g;
let m;
while ((m = re.exec(svg))) {
  const g = el({});
  g.kids.title = el({ text: unxml(m[1]) });
  g.kids.rect = el(attrsOf(m[2]));
  g.kids.text = el(attrsOf(m[3]));
  frames.push(g);
}
const root = el(attrsOf(svg.match(/<svg ([^>]*)>/)[1]));
const ids = {};
for (const id of ['details', 'matched', 'reset', 'search']) ids[id] = el({});
global.document = {
  documentElement: root,
  querySelectorAll: () => frames,
  getElementById: (id) => ids[id],
};
global.prompt = () => regex;
eval(svg.match(/<!\[CDATA\[([\s\S]*)\]\]>/)[1]);

const W = +root.getAttribute('data-w'), PAD = +root.getAttribute('data-pad');
const name = (g) => g.kids.title.textContent.replace(/ \([^(]*\)$/, '');
const x = (g) => +g.kids.rect.getAttribute('x');
const w = (g) => +g.kids.rect.getAttribute('width');
const z = frames.filter((g) => name(g) === frameName).sort((a, b) => w(b) - w(a))[0];
if (!z) { console.log('no frame ' + frameName); process.exit(1); }
const before = frames.map((g) => [x(g), w(g)]);
const zx = x(z), zw = w(z), zy = +z.kids.rect.getAttribute('y');
z.handlers.click();
let ok = Math.abs(w(z) - W) < 0.02 && Math.abs(x(z) - PAD) < 0.02;
frames.forEach((g, i) => {
  const y = +g.kids.rect.getAttribute('y');
  const [ox, ow] = before[i];
  const inside = ox >= zx - 1e-6 && ox + ow <= zx + zw + 1e-6;
  if (y > zy && ox <= zx + 1e-6 && ox + ow >= zx + zw - 1e-6)
    ok = ok && Math.abs(w(g) - W) < 0.02;           // a caller: full width
  else if (y <= zy && inside)
    ok = ok && Math.abs(w(g) - ow * W / zw) < 0.02; // a callee: scaled
  else
    ok = ok && g.style.display === 'none';          // elsewhere: hidden
});
console.log(ok ? 'zoom OK' : 'zoom WRONG');
ids.reset.handlers.click();
const back = frames.every((g, i) => Math.abs(x(g) - before[i][0]) < 0.02 &&
  Math.abs(w(g) - before[i][1]) < 0.02 && g.style.display === '');
console.log(back ? 'reset OK' : 'reset WRONG');
ids.search.handlers.click();
const magenta = frames.filter((g) => g.kids.rect.getAttribute('fill') === 'rgb(230,0,230)');
console.log('highlighted ' + magenta.length);
console.log(ids.matched.textContent);
