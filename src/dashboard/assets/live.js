/* global window, document, fetch, location, DOMParser, EventSource */
// Live updates over Server-Sent Events (GET /events, behind the session). Sections marked
// data-live-section are fetched again and swapped in when something happens; the Activity
// page also lists each event as it arrives. Without this script the pages still work.
(() => {
  if (!window.EventSource) return;
  const head = document.querySelector('[data-site-id]');
  const siteId = head ? head.getAttribute('data-site-id') : null;
  const status = document.getElementById('live-status');
  const list = document.getElementById('live-events');
  const sections = () => document.querySelectorAll('[data-live-section]');
  if (!head && !list && sections().length === 0) return;
  let refreshing = false;
  let again = false;

  async function refresh() {
    if (sections().length === 0) return;
    if (refreshing) {
      again = true;
      return;
    }
    refreshing = true;
    try {
      const response = await fetch(location.pathname + location.search, { headers: { accept: 'text/html' } });
      if (!response.ok) return;
      const next = new DOMParser().parseFromString(await response.text(), 'text/html');
      for (const section of sections()) {
        const fresh = next.getElementById(section.id);
        if (fresh && !section.contains(document.activeElement)) section.replaceWith(fresh);
      }
    } finally {
      refreshing = false;
      if (again) {
        again = false;
        void refresh();
      }
    }
  }

  const source = new EventSource('/events' + (siteId ? '?site=' + encodeURIComponent(siteId) : ''));
  source.addEventListener('event', (message) => {
    const event = JSON.parse(message.data);
    if (status) status.textContent = event.summary;
    if (list) {
      const item = document.createElement('li');
      const time = document.createElement('time');
      time.textContent = new Date().toLocaleTimeString();
      item.append(time, ' ', event.level === 'info' ? '' : event.level.toUpperCase() + ' ', event.summary);
      list.prepend(item);
      while (list.children.length > 200) list.lastElementChild.remove();
    }
    void refresh();
  });
  source.addEventListener('jobs', (message) => {
    const jobs = JSON.parse(message.data);
    if (status && jobs.length > 0) status.textContent = jobs.map((j) => j.kind + ' ' + j.state).join(', ');
    void refresh();
  });
})();
