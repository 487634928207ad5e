from autofuse.compile_adapter import kernel_compile

tiling_def = r'''TilingData(tile_len=256, ub_size=32768, tail_len=64)'''
kernel_key = 'a10b004c181b28315008a07adebde006'
kernel_compile(tiling_def)
