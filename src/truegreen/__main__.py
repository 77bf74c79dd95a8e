from truegreen.start import main

main()
