# kron_warnings(TARGET): the project's warning set, applied to every kron target.
function(kron_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  if(KRON_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(KRON_SANITIZE)
  add_compile_options(-fsanitize=${KRON_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${KRON_SANITIZE})
endif()
