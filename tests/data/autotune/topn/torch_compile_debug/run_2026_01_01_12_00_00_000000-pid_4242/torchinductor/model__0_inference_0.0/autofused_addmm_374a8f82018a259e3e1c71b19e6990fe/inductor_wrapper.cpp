// host wrapper of autofused_addmm_374a8f82018a259e3e1c71b19e6990fe
extern "C" int wrapper(void* stream, void** args);
