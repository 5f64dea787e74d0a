// Preloaded into every test process (tap's node-arg `--require`, which runs before the
// `--import` hooks tap adds). tap's process-info recorder (@tapjs/processinfo) is on in every
// test process and every Node process a test spawns; it exists for coverage, which this suite
// turns off, yet it costs each process about a second of CPU on this 2-core machine:
//
// - its load hook reads the source of every module loaded and posts it across threads. An
//   exclude pattern that matches every file makes it record nothing;
// - its registration (a record written at exit, child_process and require patched so that
//   children load it too) is another 0.65 CPU-s (test/financial-docs: 6.55 -> 5.9 CPU-s). Its
//   own switch for tap's tests turns that off for this process;
// - the processes a test spawns inherit NODE_OPTIONS from tap's runner, with the recorder's
//   --import in it: taken out here, so a tsc or a generator run by a test does not load it.
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = '/./';
process.env.__TAPJS_PROCESSINFO_TESTING_NO_REGISTER__ = String(process.pid);
if (process.env.NODE_OPTIONS) {
  process.env.NODE_OPTIONS = process.env.NODE_OPTIONS.replace(/"?--(?:import|loader)=\S*@tapjs[\\/]processinfo\S*?"?(?=\s|$)/g, '').trim();
}
