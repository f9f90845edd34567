%% A known CPU split between two functions, for jitrace's BEAM tests: a/2 does three units of
%% work for every one of b/2's, the same work per unit.
%% Usage: erl +JPperf true -noshell -pa DIR -run hot main [MS]
%% Prints "pid N" at once, then, when done, each function's units of work ("units F=N") and
%% every call's span ("iv F BEGIN END", CLOCK_MONOTONIC ns, the clock of jitrace's samples),
%% then "done", and halts. hot2.erl drives other functions with drive/2.
-module(hot).
-export([main/0, main/1, drive/2, unit/0, a/2, b/2]).

unit() -> 200000.	% iterations in a unit of work

a(0, X) -> X;
a(N, X) -> a(N - 1, (X * 1103515245 + 12345 + N) band 16#fffffff).

b(0, X) -> X;
b(N, X) -> b(N - 1, (X * 1103515245 + 12345 + N) band 16#fffffff).

main() -> main(["4000"]).
main([Ms]) ->
	drive([{fun a/2, "hot:a/2", 3}, {fun b/2, "hot:b/2", 1}], list_to_integer(Ms)).

%% The OS's CLOCK_MONOTONIC, which erlang:monotonic_time/1 is only an offset (and slew) from.
now_ns() ->
	{time, T} = lists:keyfind(time, 1, erlang:system_info(os_monotonic_time_source)),
	T.

%% Call each {Fun, Name, Units} in turn for Ms milliseconds, then print what was done.
drive(Work, Ms) ->
	io:format("pid ~s~n", [os:getpid()]),
	{Spans, Units} = rounds(Work, now_ns() + Ms * 1000000, [], #{}),
	[io:format("iv ~s ~b ~b~n", [N, B, E]) || {N, B, E} <- lists:reverse(Spans)],
	[io:format("units ~s=~b~n", [N, maps:get(N, Units, 0)]) || {_, N, _} <- Work],
	io:format("done~n"),
	erlang:halt().

rounds(Work, End, Spans, Units) ->
	case now_ns() < End of
		false -> {Spans, Units};
		true ->
			{S, U} = lists:foldl(fun call/2, {Spans, Units}, Work),
			rounds(Work, End, S, U)
	end.

call({F, Name, N}, {Spans, Units}) ->
	B = now_ns(),
	F(N * unit(), 1),
	{[{Name, B, now_ns()} | Spans], maps:update_with(Name, fun(V) -> V + N end, N, Units)}.
