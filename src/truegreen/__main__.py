from truegreen.cli import main

main()
