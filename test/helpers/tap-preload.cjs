// Preloaded into every test process (tap's node-arg `--require`, which runs before the
// `--import` hooks tap adds). tap's process-info recorder (@tapjs/processinfo) is on in every
// test process and every Node process a test spawns; it exists for coverage, which this suite
// turns off, yet its load hook reads the source of every module loaded and posts it across
// threads: about a second of CPU per process on this 2-core machine. An exclude pattern that
// matches every file makes it record nothing; the spawned processes inherit it.
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = '/./';
