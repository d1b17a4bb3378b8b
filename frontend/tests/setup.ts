import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

afterEach(() => {
  cleanup();
  // The page remembers each link's open unit (shownUnit.ts); every test starts afresh.
  window.localStorage.clear();
});
