// host wrapper of autofused_neg_a211c823ba72c3c7d20508d53e3b6d63
extern "C" int wrapper(void* stream, void** args);
