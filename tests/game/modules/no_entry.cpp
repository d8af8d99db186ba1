// A shared library with no keel_game_module symbol: the loader must say the entry point
// is missing.
extern "C" __attribute__((visibility("default"))) int keel_not_a_game(void) { return 7; }
