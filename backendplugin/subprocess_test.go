package backendplugin

// serveEnv, set in a re-executed test binary's environment, makes TestMain
// serve a fake backend instead of running the tests.
const serveEnv = "LAZYVI_BACKENDPLUGIN_TEST_SERVE"
