// Polling of a view's data: `refresh` runs at once and then every `everyMs` while the page is visible
// (a hidden tab asks nothing), and stops when the view unmounts or `refresh` changes.
import { useEffect } from 'preact/hooks';

export function usePolling(refresh, everyMs) {
  useEffect(() => {
    refresh();
    const timer = setInterval(() => {
      if (document.visibilityState !== 'hidden') refresh();
    }, everyMs);
    return () => clearInterval(timer);
  }, [refresh, everyMs]);
}
