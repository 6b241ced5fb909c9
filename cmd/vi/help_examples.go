package main

// commandExamples are the examples "vi help CMD" shows under the
// command's synopsis and usage, by command name: runnable lines, each
// doing one thing a user comes for (TestCommandExamples parses them).
var commandExamples = map[string][]string{
	"estimate": {
		"vi estimate --data lin.csv --target y",
		"vi estimate --data train.csv --eval-data test.csv --estimators lazy,dropout",
		"vi estimate --data lin.csv --format json --out lin-vi.json --plot lin-vi.png",
		"vi estimate --data survey.csv --groups onehot --estimators lazy,retrain --adjust holm",
	},
	"shapley": {
		"vi shapley --data lin.csv --measure r2 --reduced lazy,retrain --plot lin-shapley.png",
		"vi shapley --data highdim.csv --measure r2 --lambda 50 --adjust holm --format json",
		"vi shapley --data survey.csv --groups onehot",
	},
	"roar": {
		"vi roar --data lin.csv --plot roar.png",
		"vi roar --data lin.csv --ordering grad,random --fractions .1,.5,.9",
		"vi roar --data digits.csv --backend cnn --image 8x8 --estimators retrain",
	},
	"train": {
		"vi train --data lin.csv --out lin.vimodel",
		"vi train --data lin.csv --repeats 1 --crossfit 0 --out lin-split.vimodel",
		"vi train --data digits.csv --backend cnn --image 8x8 --out digits.vimodel",
	},
	"merge": {
		"vi merge --out lin-vi.json s1.json s2.json",
		"vi merge --format table s1.json s2.json",
		"vi merge --format csv --out lin-vi.csv shard-*.json",
	},
	"simulate": {
		"vi simulate --setting linear --rho 0.9 --n 2000 --out lin.csv",
		"vi simulate --setting interaction --n 1000 --out int.csv",
		"vi simulate --setting binary --n 1000 --seed 2 --out bin.csv",
	},
	"bench": {
		"vi bench highdim",
		"vi bench data --data lin.csv --target y --features 3",
		"vi bench highdim --n 10000 --width 200:100 --features 4",
	},
	"experiment": {
		"vi experiment --list",
		"vi experiment highdim --reps 2 --out results",
		"vi experiment all --out docs/paper",
	},
	"backends":   {"vi backends"},
	"estimators": {"vi estimators"},
	"measures":   {"vi measures"},
	"version":    {"vi version"},
	"help":       {"vi help", "vi help estimate", "vi help --long estimate"},
}
