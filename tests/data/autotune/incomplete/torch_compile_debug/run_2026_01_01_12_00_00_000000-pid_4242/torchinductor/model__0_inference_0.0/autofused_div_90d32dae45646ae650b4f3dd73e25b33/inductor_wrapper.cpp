// host wrapper of autofused_div_90d32dae45646ae650b4f3dd73e25b33
extern "C" int wrapper(void* stream, void** args);
