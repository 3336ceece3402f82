// A windowed list: rows have one fixed height, and only the rows in view (plus an overscan) are in the DOM, so a
// run with 10,000 events scrolls as fast as one with ten. Small lists (up to `renderAllBelow`) render whole.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';

export function VirtualList({ items, rowHeight = 26, height = 360, overscan = 12, renderAllBelow = 300, renderRow, follow = false, class: cls = '' }) {
  const box = useRef(null);
  const [scrollTop, setScrollTop] = useState(0);
  const pinned = useRef(true);
  const total = items.length * rowHeight;
  useEffect(() => {
    // follow the tail while the user has not scrolled up
    const el = box.current;
    if (follow && el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [items.length, follow]);
  const onScroll = (e) => {
    const el = e.currentTarget;
    pinned.current = el.scrollTop + el.clientHeight >= el.scrollHeight - rowHeight;
    setScrollTop(el.scrollTop);
  };
  const windowed = items.length > renderAllBelow;
  const first = windowed ? Math.max(0, Math.floor(scrollTop / rowHeight) - overscan) : 0;
  const last = windowed ? Math.min(items.length, Math.ceil((scrollTop + height) / rowHeight) + overscan) : items.length;
  const rows = [];
  for (let i = first; i < last; i++) rows.push(renderRow(items[i], i));
  return html`<div class=${`vlist ${cls}`} ref=${box} onScroll=${onScroll} style=${{ maxHeight: `${height}px` }} data-rows=${items.length}>
    <div class="vlist-inner" style=${{ height: windowed ? `${total}px` : 'auto', position: 'relative' }}>
      <div style=${{ transform: `translateY(${first * rowHeight}px)` }}>${rows}</div>
    </div>
  </div>`;
}
