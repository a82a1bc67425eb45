# a custom prompt of two colours and a non-ASCII mark, no greeting
set -g fish_greeting
function fish_prompt
    set -l last $status
    echo -n (set_color green)fishy(set_color normal) (prompt_pwd) "[$last] ❯ "
end
