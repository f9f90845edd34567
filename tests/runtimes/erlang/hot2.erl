%% Like hot.erl, with other names and a 1:2 split: c/2 does one unit for every two of d/2's.
%% Usage: erl +JPperf true -noshell -pa DIR -run hot2 main [MS]
-module(hot2).
-export([main/0, main/1, c/2, d/2]).

c(0, X) -> X;
c(N, X) -> c(N - 1, (X * 69069 + 1 + N) band 16#fffffff).

d(0, X) -> X;
d(N, X) -> d(N - 1, (X * 69069 + 1 + N) band 16#fffffff).

main() -> main(["4000"]).
main([Ms]) ->
	hot:drive([{fun c/2, "hot2:c/2", 1}, {fun d/2, "hot2:d/2", 2}], list_to_integer(Ms)).
