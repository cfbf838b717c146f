/** Chromium flags for the browser tests: a container has no GPU and no user-namespace sandbox, and the pages need neither (nor the network). */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'];
